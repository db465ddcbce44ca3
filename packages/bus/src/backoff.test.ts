import { backoffDelay, backoffProblems, DEFAULT_BACKOFF } from './backoff';

describe('backoffDelay', () => {
  const policy = { initialDelayMs: 100, maxDelayMs: 1000, factor: 2, jitter: 0.5 };

  it.each([
    [1, 0, 50],
    [1, 0.999999, 100],
    [2, 0, 100],
    [3, 0.5, 300],
    [4, 0, 400],
    [5, 0.999999, 1000],
    [50, 0, 500],
    [2000, 0.999999, 1000],
  ])('attempt %d with random %d gives %d ms', (attempt, r, expected) => {
    expect(backoffDelay(policy, attempt, () => r)).toBe(expected);
  });

  it('never exceeds the cap and grows until it', () => {
    const delays = Array.from({ length: 20 }, (_, i) => backoffDelay(DEFAULT_BACKOFF, i + 1, () => 0.999999));
    expect(Math.max(...delays)).toBeLessThanOrEqual(DEFAULT_BACKOFF.maxDelayMs);
    expect(delays[0]).toBeLessThan(delays[5] ?? 0);
  });

  it('lists every problem of a bad policy', () => {
    expect(backoffProblems({ initialDelayMs: -1, maxDelayMs: -2, factor: 0.5, jitter: 2 })).toHaveLength(4);
    expect(backoffProblems(DEFAULT_BACKOFF)).toEqual([]);
  });
});
