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

/** Deepest nesting of arrays and objects read (real bodies are a few levels deep). */
export const MAX_BODY_DEPTH = 64;

/** A NUL or a UTF-16 surrogate without its pair: PostgreSQL can store neither (text, jsonb). */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Walks a parsed body without recursion: too deep is "Malformed request body" (deeper than any
 * schema, and what JSON.stringify could not even print back), a string or key that PostgreSQL
 * cannot store is a 400 naming why — so no handler meets either.
 */
function checkReadable(body: unknown): void {
  const stack: [unknown, number][] = [[body, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [value, depth] = next;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) throw badRequest('Invalid input: strings must not hold a NUL character or an unpaired UTF-16 surrogate.');
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_BODY_DEPTH) throw badRequest('Malformed request body');
      for (const [k, v] of Object.entries(value)) stack.push([k, depth + 1], [v, depth + 1]);
    }
  }
}

/**
 * The request body as Nova's wsgi layer reads it: JSON for POST and PUT (an empty body is
 * `undefined`, as Nova's `None`), ignored for other methods; text that is not JSON is Nova's
 * 400 "Malformed request body", and so is JSON nested deeper than {@link MAX_BODY_DEPTH}; a
 * NUL or an unpaired surrogate in any string is a 400 too (PostgreSQL cannot store them). Pure.
 */
export function parseBody(method: string, raw: string | undefined): unknown {
  if (!METHODS_WITH_BODY.includes(method) || raw === undefined || raw === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(raw) as unknown;
  } catch {
    throw badRequest('Malformed request body');
  }
  checkReadable(body);
  return body;
}
