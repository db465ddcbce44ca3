import pino from 'pino';
import { DecisionStats } from './decision-stats';

function capture(): { log: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { base: undefined, timestamp: false },
    {
      write: (s: string) => {
        lines.push(JSON.parse(s) as Record<string, unknown>);
      },
    },
  );
  return { log, lines };
}

test('sums decisions by outcome and claim retries, logs an interval only when it had decisions, with totals since start', () => {
  const { log, lines } = capture();
  const stats = new DecisionStats(log, 0);
  stats.flush();
  expect(lines).toEqual([]);
  for (const ms of [1, 2, 3, 4, 100]) stats.observe({ ms, outcome: 'selected', claimRetries: ms === 100 ? 2 : 0 });
  stats.observe({ ms: 5, outcome: 'no_valid_host', claimRetries: 1 });
  stats.flush();
  expect(lines[0]).toMatchObject({
    msg: 'scheduler decisions',
    decisions: 6,
    p50_ms: 4,
    p99_ms: 100,
    claim_retries: 3,
    totals: { selected: 5, no_valid_host: 1, invalid: 0, error: 0, claim_retries: 3 },
  });
  stats.observe({ ms: 7, outcome: 'error', claimRetries: 0 });
  stats.close();
  expect(lines[1]).toMatchObject({ decisions: 1, claim_retries: 0, totals: { selected: 5, no_valid_host: 1, error: 1, claim_retries: 3 } });
  expect(lines).toHaveLength(2);
});
