import { badRequest } from './errors';

/** Nova's jsonschema message shape: `Invalid input for field/attribute <path>. Value: <value>. <why>`. Pure. */
export const invalidInput = (path: string, value: unknown, why: string): Error =>
  badRequest(`Invalid input for field/attribute ${path}. Value: ${typeof value === 'string' ? value : JSON.stringify(value)}. ${why}`);

/** `<value> is not of type '<type>'`, as jsonschema says it. */
export const notOfType = (path: string, value: unknown, ...types: string[]): Error =>
  invalidInput(path, value, `${JSON.stringify(value)} is not of type ${types.map((t) => `'${t}'`).join(', ')}`);
