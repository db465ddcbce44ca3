import { ApiError, badRequest } from './errors';

/** The request content types Nova reads (nova/api/openstack/wsgi.py `_SUPPORTED_CONTENT_TYPES`). */
export const SUPPORTED_CONTENT_TYPES: readonly string[] = ['application/json', 'application/vnd.openstack.compute+json'];

/** Methods whose body Nova deserializes (others ignore it). */
const METHODS_WITH_BODY: readonly string[] = ['POST', 'PUT'];

/**
 * Nova's check of the `Content-Type` header, made on every request whatever its method:
 * absent, empty or `text/plain` mean "no type" (the body is still read as JSON), parameters
 * such as `charset` are ignored, anything else but JSON is Nova's 415. Pure.
 */
export function checkContentType(header: string | undefined): void {
  if (header === undefined) return;
  const media = (header.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (media === '' || media === 'text/plain' || SUPPORTED_CONTENT_TYPES.includes(media)) return;
  throw new ApiError(415, 'Unsupported Content-Type');
}

/**
 * The request body as Nova's wsgi layer reads it: JSON for POST and PUT (an empty body is
 * `undefined`, as Nova's `None`), ignored for other methods; text that is not JSON is Nova's
 * 400 "Malformed request body". Pure.
 */
export function parseBody(method: string, raw: string | undefined): unknown {
  if (!METHODS_WITH_BODY.includes(method) || raw === undefined || raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw badRequest('Malformed request body');
  }
}
