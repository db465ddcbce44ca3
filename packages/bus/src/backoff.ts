/** Reconnect backoff: exponential, capped, with jitter so a fleet does not reconnect in step. */
export interface BackoffPolicy {
  /** Delay before the first retry, in milliseconds. */
  readonly initialDelayMs: number;
  /** No delay is ever longer than this, jitter included. */
  readonly maxDelayMs: number;
  /** Growth per attempt (>= 1). */
  readonly factor: number;
  /** Fraction (0..1) of each delay that is random: delay is in [base*(1-jitter), base]. */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = Object.freeze({ initialDelayMs: 100, maxDelayMs: 5000, factor: 2, jitter: 0.5 });

/** Lists every problem with a policy (empty when valid). */
export function backoffProblems(policy: BackoffPolicy): string[] {
  const problems: string[] = [];
  if (!(policy.initialDelayMs >= 0)) problems.push('initialDelayMs must be >= 0');
  if (!(policy.maxDelayMs >= policy.initialDelayMs)) problems.push('maxDelayMs must be >= initialDelayMs');
  if (!(policy.factor >= 1)) problems.push('factor must be >= 1');
  if (!(policy.jitter >= 0 && policy.jitter <= 1)) problems.push('jitter must be within [0, 1]');
  return problems;
}

/**
 * Delay before retry number `attempt` (1-based). `random` returns a number in [0, 1);
 * pass a seeded one in tests. Never exceeds `maxDelayMs`, never below `base*(1-jitter)`.
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 64));
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** exponent);
  return Math.round(base * (1 - policy.jitter) + random() * base * policy.jitter);
}
