import type { Failure, FilterDiagnosis } from '@cellsched/wire';
import { SCHEDULER_ERROR_CODES } from './errors';

/**
 * Nova's NoValidHost as the one wire Failure: expected (the cloud is full or the request cannot
 * fit), not retryable as is (the caller buries the instance in cell 0), carrying the per-filter
 * diagnosis and the claim retries in metadata.
 */
export function noValidHostFailure(reason: string, diagnosis: readonly FilterDiagnosis[], claimRetries: number): Failure {
  return {
    code: SCHEDULER_ERROR_CODES.noValidHost,
    message: `No valid host was found. ${reason}`,
    retryable: false,
    expected: true,
    metadata: { claim_retries: String(claimRetries) },
    diagnosis: diagnosis.map((d) => ({ ...d })),
  };
}
