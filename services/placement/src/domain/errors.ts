import { FAILURE_CODES } from '@cellsched/wire';

const P = FAILURE_CODES.placement;

/**
 * Placement's stable error codes (placement/errors.py), by Placement's own names; the text lives
 * in the registry of @cellsched/wire. Once published, never changed. Clients branch on these,
 * never on the text of `detail`.
 */
export const ErrorCode = {
  DEFAULT: P.undefinedCode,
  INVENTORY_INUSE: P.inventoryInUse,
  CONCURRENT_UPDATE: P.concurrentUpdate,
  DUPLICATE_NAME: P.duplicateName,
  PROVIDER_IN_USE: P.providerInUse,
  PROVIDER_CANNOT_DELETE_PARENT: P.providerCannotDeleteParent,
  RESOURCE_PROVIDER_NOT_FOUND: P.providerNotFound,
  ILLEGAL_DUPLICATE_QUERYPARAM: P.queryDuplicateKey,
  QUERYPARAM_BAD_VALUE: P.queryBadValue,
  QUERYPARAM_MISSING_VALUE: P.queryMissingValue,
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** HTTP reason phrases Placement (webob) puts in `title`. */
export const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
};

/** webob's standard explanation that precedes the detail of each error body. */
export const EXPLANATIONS: Readonly<Record<number, string>> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  401: 'This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.',
  403: 'Access was denied to this resource.',
  404: 'The resource could not be found.',
  405: 'The method is not allowed for this resource.',
  406: 'The resource could not be generated that was acceptable to your browser.',
  409: 'There was a conflict when trying to complete your request.',
  415: 'The request media type is not supported by this server.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
};

/**
 * An expected failure of a Placement request: carries the HTTP status, the human
 * detail and the stable error code (`placement.undefined_code` when none applies).
 */
export class PlacementError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly code: ErrorCodeValue = ErrorCode.DEFAULT,
    readonly headers: Readonly<Record<string, string>> = {},
    /**
     * True for the errors that reach Placement's microversion middleware as exceptions (the
     * dispatcher's own, and an object-layer NotFound a handler does not catch): their answer
     * carries OpenStack-API-Version but not the `Vary` added to every returned response.
     */
    readonly escaped = false,
  ) {
    super(detail);
    this.name = 'PlacementError';
  }
}

export const badRequest = (detail: string, code?: ErrorCodeValue): PlacementError => new PlacementError(400, detail, code);
export const notFound = (detail: string, code?: ErrorCodeValue): PlacementError => new PlacementError(404, detail, code);
/** An object-layer NotFound that Placement's handler lets escape (see `PlacementError.escaped`). */
export const escapedNotFound = (detail: string): PlacementError => new PlacementError(404, detail, ErrorCode.DEFAULT, {}, true);
export const conflict = (detail: string, code?: ErrorCodeValue): PlacementError => new PlacementError(409, detail, code);

/** The 409 every lost optimistic race answers (stale provider or consumer generation). */
export function concurrentUpdate(detail: string): PlacementError {
  return new PlacementError(409, detail, ErrorCode.CONCURRENT_UPDATE);
}
