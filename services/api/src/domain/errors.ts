/** Nova's error body keys by HTTP status (nova/api/openstack/wsgi.py Fault). */
const KIND_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  406: 'notAcceptable',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

/**
 * An expected API failure: rendered as Nova's `{"<kind>": {"code": status, "message": ...}}`.
 * Anything else thrown by a handler is a 500 `computeFault`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Nova's key for this status (`badRequest`, `itemNotFound`, ...). */
  get kind(): string {
    return KIND_BY_STATUS[this.status] ?? 'computeFault';
  }
}

/** The JSON body Nova answers with for an error. Pure. */
export function errorBody(status: number, message: string): Record<string, { code: number; message: string }> {
  const kind = KIND_BY_STATUS[status] ?? 'computeFault';
  return { [kind]: { code: status, message } };
}

export const badRequest = (message: string): ApiError => new ApiError(400, message);
export const notFound = (message: string): ApiError => new ApiError(404, message);
export const forbidden = (message: string): ApiError => new ApiError(403, message);
export const conflict = (message: string): ApiError => new ApiError(409, message);
