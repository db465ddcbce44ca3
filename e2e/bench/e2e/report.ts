// `pnpm bench e2e`'s report: markdown tables of every phase and host count, builds/s as a
// share of the ceilings the per-create counts imply, and a PNG plot (gnuplot, when installed:
// `apt-get install gnuplot-nox`) of sustained ACTIVE/s and p99 against the host count.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreateCounts } from './costs';
import type { PhaseResult } from './load';

type Measured = PhaseResult & {
  cpuMsPerBuild: Record<string, number>;
  /** Absent in runs before it was measured. */
  machineBusyPct?: number;
  commitsPerBuild: number;
  claimRetries: number;
  reschedules: { share: number };
  /** The ERROR servers' fault messages and counts; absent in runs before it was recorded. */
  errorReasons?: Record<string, number>;
};

export interface HostRun {
  hosts: number;
  phases: Measured[];
  ramp: Measured[];
  /** The highest open-loop rate that held. */
  best: number;
  sustained: Measured | undefined;
  invariants: Record<string, string>;
  tracingOff: Measured[];
}

export interface Report {
  at: string;
  machine: Record<string, string | number>;
  options: Record<string, unknown>;
  ceilings: { pgCommitsPerS: number; rabbitPublishesPerS: number };
  perCreate: CreateCounts | undefined;
  runs: HostRun[];
  loadAverageAtEnd: string;
}

function row(hosts: number, r: Measured): string {
  const cpu = r.cpuMsPerBuild;
  const top = Object.entries(cpu)
    .filter(([k]) => !k.startsWith('total'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return (
    `| ${hosts.toLocaleString('en')} | ${r.name} | ${r.acceptedPerS} | **${r.activePerS}** | ${r.p50Ms} / ${r.p99Ms} / ${r.maxMs} | ${r.active} / ${r.error} / ${r.unfinished} ` +
    `| ${Math.round(r.reschedules.share * 10) / 10}% | ${r.claimRetries} | ${cpu['total (without the load generator)']} (${top}) | ${r.machineBusyPct === undefined ? '-' : `${r.machineBusyPct}%`} | ${r.commitsPerBuild} |`
  );
}

const HEADER =
  '| hosts | phase | accepted/s | ACTIVE/s | create→ACTIVE p50 / p99 / max ms | ACTIVE / ERROR / unfinished | rescheduled | claim retries | CPU ms per build (top 4) | machine busy | commits per build |\n' +
  '|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|';

/** The ACTIVE/s ceiling each resource implies from the per-create counts. */
function ceilingShares(r: Report): string[] {
  const lines: string[] = [];
  const c = r.perCreate;
  const best = Math.max(0, ...r.runs.map((x) => x.sustained?.activePerS ?? 0));
  const commits = r.runs.flatMap((x) => (x.sustained ? [x.sustained.commitsPerBuild] : []))[0];
  if (commits !== undefined && commits > 0) {
    const cap = r.ceilings.pgCommitsPerS / commits;
    lines.push(
      `- PostgreSQL: ${r.ceilings.pgCommitsPerS} commits/s (pgbench) / ${commits} commits per build = ${Math.round(cap)} builds/s; the best sustained ${best}/s is ${Math.round((100 * best) / cap)}% of it`,
    );
  }
  if (c !== undefined && c.messages > 0) {
    const cap = r.ceilings.rabbitPublishesPerS / c.messages;
    lines.push(
      `- RabbitMQ: ${r.ceilings.rabbitPublishesPerS} persistent confirmed publishes/s / ${c.messages} messages per create = ${Math.round(cap)} builds/s; ${Math.round((100 * best) / cap)}% of it`,
    );
  }
  return lines;
}

/** A PNG of sustained ACTIVE/s and its p99 by host count, next to the JSON; undefined without gnuplot. */
function plot(r: Report, jsonPath: string): string | undefined {
  if (r.runs.length === 0 || spawnSync('gnuplot', ['--version']).status !== 0) return undefined;
  const png = jsonPath.replace(/\.json$/, '.png');
  const dat = join(mkdtempSync(join(tmpdir(), 'benche2e-plot-')), 'points.dat');
  const closed = (x: Report['runs'][number]): number | undefined => x.phases.find((p) => p.name === 'closed')?.activePerS;
  writeFileSync(
    dat,
    r.runs.map((x) => `${x.hosts} ${x.sustained?.activePerS ?? 0} ${x.sustained?.p99Ms ?? 0} ${closed(x) ?? 0}`).join('\n') + '\n',
  );
  // NOTE: a series only for a phase that ran (a run of `--phases sustained` has no closed loop to draw as 0)
  const sustained = r.runs.some((x) => x.sustained !== undefined);
  const series = [
    sustained ? `'${dat}' using 1:2 with linespoints lw 2 title 'sustained ACTIVE/s'` : undefined,
    r.runs.some((x) => closed(x) !== undefined) ? `'${dat}' using 1:4 with linespoints title 'closed loop ACTIVE/s'` : undefined,
    sustained ? `'${dat}' using 1:3 axes x1y2 with linespoints dt 2 title 'p99 ms (sustained)'` : undefined,
  ].filter((x): x is string => x !== undefined);
  if (series.length === 0) return undefined;
  const script = [
    'set terminal png size 900,500',
    `set output '${png}'`,
    "set title 'cellsched: POST /servers to ACTIVE'",
    "set xlabel 'simulated hosts'",
    "set ylabel 'ACTIVE builds/s'",
    "set y2label 'p99 create→ACTIVE (ms)'",
    'set ytics nomirror',
    'set y2tics',
    'set key left bottom',
    'set grid',
    'set yrange [0:*]',
    'set y2range [0:*]',
    `plot ${series.join(', ')}`,
  ].join('\n');
  execFileSync('gnuplot', { input: script });
  return png;
}

export function renderReport(r: Report, jsonPath: string): string {
  const m = r.machine;
  const out = [
    `## pnpm bench e2e, ${r.at}`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gb} GiB, ${m.os}, Node ${m.node}, PostgreSQL ${m.postgresql}, RabbitMQ ${m.rabbitmq}; load average at start ${m.load_average_at_start}, at end ${r.loadAverageAtEnd}.`,
    `Ceilings measured in the same run: PostgreSQL ${r.ceilings.pgCommitsPerS} small-transaction commits/s (pgbench, 16 clients); RabbitMQ ${r.ceilings.rabbitPublishesPerS} persistent confirmed publishes/s (quorum queue, a consumer acking).`,
    '',
    HEADER,
    ...r.runs.flatMap((x) => [...x.phases, ...x.ramp, ...(x.sustained ? [x.sustained] : []), ...x.tracingOff].map((p) => row(x.hosts, p))),
    '',
    ...r.runs.map(
      (x) =>
        // NOTE: the ramp's best only when a ramp ran (`--phases sustained` runs the rate it is given)
        `- ${x.hosts.toLocaleString('en')} hosts: ${x.ramp.length > 0 ? `highest open-loop rate that held ${x.best}/s; ` : ''}invariants after the load: ${Object.entries(
          x.invariants,
        )
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    ),
    // NOTE: ERRORs say why (a phase that filled the cloud: "No valid host was found")
    ...r.runs.flatMap((x) =>
      [...x.phases, ...x.ramp, ...(x.sustained ? [x.sustained] : []), ...x.tracingOff]
        .filter((p) => p.error > 0)
        .map(
          (p) =>
            `- ${x.hosts.toLocaleString('en')} hosts, ${p.name}: ${p.error} ERROR: ${Object.entries(p.errorReasons ?? {})
              .map(([msg, n]) => `${n} "${msg}"`)
              .join(', ')}`,
        ),
    ),
  ];
  if (r.perCreate) {
    const c = r.perCreate;
    out.push(
      '',
      `One create, counted in ${c.creates} create traces: ${c.pgQueries} PostgreSQL round trips (queries; ${c.pgConnects} pool checkouts), ${c.messages} messages published, ${c.grpcCalls} gRPC calls, ${c.httpCalls} other HTTP calls, ${c.spans} spans.`,
    );
    if (c.pgQueriesByService)
      out.push(
        `Round trips per create by service: ${Object.entries(c.pgQueriesByService)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}.`,
      );
    if (c.topStatements)
      out.push(
        '',
        '| statement (first 70 characters) | per create |',
        '|---|---:|',
        ...Object.entries(c.topStatements).map(([k, v]) => `| \`${k.replaceAll('|', '\\|')}\` | ${v} |`),
      );
  }
  out.push(...ceilingShares(r));
  const png = plot(r, jsonPath);
  out.push('', `JSON: ${jsonPath}${png ? `; plot: ${png}` : ' (no plot: gnuplot is not installed)'}`);
  return out.join('\n');
}
