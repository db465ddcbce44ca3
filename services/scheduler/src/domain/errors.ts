import { FAILURE_CODES } from '@cellsched/wire';

/** Error codes the scheduler publishes (the registry's `FAILURE_CODES.scheduler`; never changed once published). */
export const SCHEDULER_ERROR_CODES = FAILURE_CODES.scheduler;

/**
 * A request the scheduler refuses before doing anything (missing flavor, duplicate instance
 * uuids, negative num_alternates). Not retryable: the same request fails the same way.
 */
export class InvalidSchedulerRequest extends Error {
  readonly code = SCHEDULER_ERROR_CODES.invalidRequest;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSchedulerRequest';
  }
}

/** A scheduler policy that cannot work (unknown filter name, bad number); lists every problem. */
export class InvalidSchedulerPolicy extends Error {
  readonly code = SCHEDULER_ERROR_CODES.invalidConfig;
  constructor(readonly problems: readonly string[]) {
    super(`invalid scheduler policy: ${problems.join('; ')}`);
    this.name = 'InvalidSchedulerPolicy';
  }
}
