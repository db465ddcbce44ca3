/**
 * The human-readable table of a placement benchmark run.
 */
import type { Comparison } from './compare';
import type { ScenarioResult } from './scenario-result';

const s = (x: number): string => (x < 1 ? `${(x * 1000).toFixed(0)} ms` : `${x.toFixed(2)} s`);

function eq(c: Comparison | undefined): string {
  if (!c) return 'n/a';
  return c.equal ? `yes (${c.candidates[0]})` : `NO: ${c.detail} (${c.candidates[0]} vs ${c.candidates[1]})`;
}

/** Prints the machine, then one block per scenario with a row per target and the ratios. */
export function printTable(report: { machine: Record<string, string | number>; results: ScenarioResult[] }): void {
  const lines: string[] = [];
  lines.push(
    `machine: ${Object.entries(report.machine)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  );
  lines.push('');
  lines.push(
    '| scenario | target | load prov/s | median | p99 | median, p99 distinct queries | median limit=5 | req/s (10 clients) | claims/s (10 clients) | candidates | same candidates (fresh / after claims) |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of report.results) {
    for (const t of r.targets) {
      lines.push(
        `| ${r.scenario} | ${t.target} | ${t.providers_per_second.toFixed(1)} | ${s(t.query.median)} | ${s(t.query.p99)} | ${s(t.query_uncached.median)}, ${s(t.query_uncached.p99)} | ${s(t.query_limit5.median)} | ${t.concurrent_rps.toFixed(2)} | ${t.claims_per_second.toFixed(1)} | ${t.candidates} | ${t === r.targets[0] ? `${eq(r.equal_fresh)} / ${eq(r.equal_after_claims)}` : ''} |`,
      );
    }
    const [a, b] = r.targets;
    if (a && b) {
      const ratio = (x: number, y: number): string => `${(x / y).toFixed(1)}x`;
      lines.push(
        `| ${r.scenario} | ratio | ${ratio(a.providers_per_second, b.providers_per_second)} | ${ratio(b.query.median, a.query.median)} | ${ratio(b.query.p99, a.query.p99)} | ${ratio(b.query_uncached.median, a.query_uncached.median)}, ${ratio(b.query_uncached.p99, a.query_uncached.p99)} | ${ratio(b.query_limit5.median, a.query_limit5.median)} | ${ratio(a.concurrent_rps, b.concurrent_rps)} | ${ratio(a.claims_per_second, b.claims_per_second)} | | |`,
      );
    }
  }
  console.log(lines.join('\n'));
}
