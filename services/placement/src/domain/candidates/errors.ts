import type { ErrorCode } from '../errors';

/**
 * Raised for a query Placement answers with 400 Bad Request. `message` is Placement's own
 * text for the same condition (clients and gabbi tests match on it).
 */
export class CandidateQueryError extends Error {
  override readonly name = 'CandidateQueryError';

  /** `code`: Placement's error code for the condition, when it has a specific one. */
  constructor(
    message: string,
    readonly code?:
      typeof ErrorCode.QUERYPARAM_BAD_VALUE | typeof ErrorCode.ILLEGAL_DUPLICATE_QUERYPARAM | typeof ErrorCode.QUERYPARAM_MISSING_VALUE,
  ) {
    super(message);
  }
}

/**
 * Internal signal that no provider can match (Placement's ResourceProviderNotFound inside
 * the search): the search answers an empty result, never an error.
 */
export class NoCandidates extends Error {
  override readonly name = 'NoCandidates';
}
