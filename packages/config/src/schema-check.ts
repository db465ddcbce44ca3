import { parseDuration } from './duration';
import { parseValue } from './parse-value';
import { OPTION_TYPES, type ConfigSchema, type OptionSpec } from './schema';

const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;
const OPTION_NAME = /^[a-z][a-zA-Z0-9]*$/;

function checkBounds(name: string, spec: OptionSpec): string[] {
  if (spec.type !== 'int' && spec.type !== 'float' && spec.type !== 'duration') return [];
  const toNumber = (v: number | string | undefined): number | undefined => (typeof v === 'string' ? (parseDuration(v) ?? NaN) : v);
  const [min, max] = [toNumber(spec.min), toNumber(spec.max)];
  const problems: string[] = [];
  for (const [label, v] of [
    ['min', min],
    ['max', max],
  ] as const) {
    if (v !== undefined && !Number.isFinite(v))
      problems.push(`option ${name}: ${label} ${JSON.stringify(spec[label])} is not a valid bound`);
  }
  if (min !== undefined && max !== undefined && min > max) problems.push(`option ${name}: min is above max`);
  return problems;
}

function checkOption(name: string, spec: OptionSpec): string[] {
  const problems: string[] = [];
  const type: unknown = (spec as { type?: unknown }).type;
  if (!OPTION_NAME.test(name)) problems.push(`option name ${JSON.stringify(name)} must be camelCase`);
  if (!(OPTION_TYPES as readonly unknown[]).includes(type)) {
    problems.push(`option ${name}: unknown type ${JSON.stringify(type)} (known: ${OPTION_TYPES.join(', ')})`);
    return problems;
  }
  if (typeof spec.env !== 'string' || !ENV_NAME.test(spec.env)) {
    problems.push(`option ${name}: env ${JSON.stringify(spec.env)} must be UPPER_SNAKE_CASE`);
  }
  if (typeof spec.help !== 'string' || spec.help.trim() === '') problems.push(`option ${name}: help text is missing`);
  if (spec.type === 'enum' && (!Array.isArray(spec.values) || spec.values.length === 0)) {
    problems.push(`option ${name}: enum needs a non-empty values list`);
  }
  problems.push(...checkBounds(name, spec));
  if (spec.default !== undefined) {
    if (spec.required) problems.push(`option ${name}: a required option cannot have a default`);
    const parsed = parseValue(spec, spec.default);
    if (!parsed.ok) problems.push(`option ${name}: default ${parsed.reason}`);
  }
  return problems;
}

/** Every mistake in the declaration itself (unknown type, bad env name, bad default, duplicate env). */
export function checkSchema(schema: ConfigSchema): string[] {
  const problems: string[] = [];
  const envOwner = new Map<string, string>();
  for (const [name, spec] of Object.entries(schema)) {
    problems.push(...checkOption(name, spec));
    const other = envOwner.get(spec.env);
    if (other !== undefined) problems.push(`options ${other} and ${name} share env ${spec.env}`);
    envOwner.set(spec.env, name);
  }
  return problems;
}
