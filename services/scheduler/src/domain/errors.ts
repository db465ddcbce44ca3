/** Error codes the scheduler publishes (`<service>.<noun>.<condition>`; never changed once published). */
export const SCHEDULER_ERROR_CODES = Object.freeze({
  noValidHost: 'scheduler.no_valid_host',
  invalidRequest: 'scheduler.request.invalid',
  invalidConfig: 'scheduler.config.invalid',
});

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
