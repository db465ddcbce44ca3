#!/usr/bin/env node
// Live trace tail for operators, and the compose deployment's trace collector: an OTLP/HTTP
// JSON receiver and/or a JSON-lines file tail, printing each trace as a tree of one line per
// span; a query endpoint and client to read one server's whole trace. See --help.
import { renderHelp, wantsHelp } from '@cellsched/config';
import { RotatingFile } from '../rotating-file';
import { traceTailPlan, traceTailSchema, type TraceTailPlan } from '../trace-tail/cli-config';
import { searchSpanFiles } from '../trace-tail/file-search';
import { formatTrace, traceMentions } from '../trace-tail/format';
import { type FoundTrace, tracesFromJson } from '../trace-tail/found-trace';
import type { TailSpan } from '../trace-tail/otlp-json';
import { startReceiver } from '../trace-tail/receiver';
import { RecentTraces } from '../trace-tail/recent-traces';
import { tailFile } from '../trace-tail/sources';
import { TraceBuffer } from '../trace-tail/trace-buffer';

const USAGE = `usage: trace-tail [--listen [HOST:]PORT [--out SPANS.jsonl]] [--file SPANS.jsonl [--from-end | --once]] [--match TEXT] [--quiet-ms N]
       trace-tail --collector http://HOST:4318 --match TEXT      (one server's whole trace from a running collector)

  services export to it with exporter 'otlp', endpoint http://HOST:4318 (or exporter 'file' for --file)`;

type FollowPlan = Extract<TraceTailPlan, { mode: 'follow' }>;

function printTraces(traces: readonly FoundTrace[]): void {
  for (const { traceId, spans } of traces) process.stdout.write(`${formatTrace(traceId, spans).join('\n')}\n`);
}

async function query(plan: Extract<TraceTailPlan, { mode: 'query' }>): Promise<void> {
  const url = new URL('/v1/traces', plan.collector);
  if (plan.match !== undefined) url.searchParams.set('match', plan.match);
  url.searchParams.set('limit', String(plan.limit));
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url.toString()}: HTTP ${res.status} ${await res.text()}`);
  const traces = tracesFromJson(await res.json());
  printTraces(traces);
  if (traces.length === 0) {
    console.error(`trace-tail: the collector holds no trace${plan.match === undefined ? '' : ` that mentions '${plan.match}'`}`);
    process.exitCode = 1;
  }
}

function read(plan: Extract<TraceTailPlan, { mode: 'read' }>): void {
  if (plan.match !== undefined) return printTraces(searchSpanFiles(plan.file, plan.match, Number.MAX_SAFE_INTEGER));
  const buffer = new TraceBuffer(0);
  tailFile(plan.file, { fromEnd: false, once: true, everyMs: 0 }, (spans) => buffer.add(spans, 0));
  printTraces(buffer.release(0, true));
}

/** Where received spans go besides the printer: the rotated --out file and the memory the queries read. */
function collector(plan: FollowPlan) {
  const out = plan.out === undefined ? undefined : new RotatingFile(plan.out.file, plan.out.rotation);
  const recent = new RecentTraces(plan.keepSpans);
  return {
    keep(spans: TailSpan[], request: unknown): void {
      out?.append(`${JSON.stringify(request)}\n`);
      recent.add(spans);
    },
    find(match: string | undefined, limit: number): FoundTrace[] {
      return out !== undefined && match !== undefined ? searchSpanFiles(out.file, match, limit) : recent.find(match, limit);
    },
  };
}

async function follow(plan: FollowPlan): Promise<void> {
  const buffer = new TraceBuffer(plan.quietMs);
  const print = (all: boolean) =>
    printTraces(buffer.release(Date.now(), all).filter((t) => plan.match === undefined || traceMentions(t.spans, plan.match)));
  const add = (spans: TailSpan[]) => buffer.add(spans, Date.now());
  const stops: Array<() => void> = [];
  if (plan.file) stops.push(tailFile(plan.file, { fromEnd: plan.fromEnd, once: false, everyMs: 200 }, add));
  if (plan.listen) {
    const store = collector(plan);
    const server = await startReceiver(plan.listen.host, plan.listen.port, {
      onSpans: (spans, request) => {
        store.keep(spans, request);
        add(spans);
      },
      find: store.find,
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : plan.listen.port;
    console.error(`trace-tail: listening on http://${plan.listen.host}:${port}/v1/traces${plan.out ? `, writing ${plan.out.file}` : ''}`);
    stops.push(() => server.close());
  }
  const timer = setInterval(() => print(false), Math.max(50, Math.min(plan.quietMs, 250)));
  const stop = () => {
    clearInterval(timer);
    stops.forEach((s) => s());
    print(true);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function main(argv: string[]): Promise<void> {
  if (wantsHelp(argv)) return void console.log(`${USAGE}\n\n${renderHelp(traceTailSchema)}`);
  const plan = traceTailPlan(argv);
  if (plan.mode === 'query') return query(plan);
  if (plan.mode === 'read') return read(plan);
  return follow(plan);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`trace-tail: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  process.exitCode = 2;
});
