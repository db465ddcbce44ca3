#!/usr/bin/env node
// Live trace tail for operators: an OTLP/HTTP JSON receiver and/or a JSON-lines file tail,
// printing each trace as a tree of one line per span. No dependencies. See --help.
import { parseArgs } from 'node:util';
import { formatTrace, traceMentions } from '../trace-tail/format';
import type { TailSpan } from '../trace-tail/otlp-json';
import { startReceiver, tailFile } from '../trace-tail/sources';
import { TraceBuffer } from '../trace-tail/trace-buffer';

const USAGE = `usage: trace-tail [--listen [HOST:]PORT] [--file SPANS.jsonl [--from-end | --once]] [--quiet-ms N] [--match TEXT]

  --listen ADDR   receive OTLP/HTTP JSON on ADDR (default 127.0.0.1:4318 when no --file);
                  point services at it: exporter 'otlp', endpoint http://127.0.0.1:4318
  --file PATH     read an OTLP JSON-lines span file (exporter 'file') and follow it
  --from-end      skip what the file already holds
  --once          print what the file holds, then exit
  --quiet-ms N    print a trace once no span of it arrived for N ms (default 500)
  --match TEXT    print only traces that mention TEXT in a span name or attribute: a server
                  uuid (the create's trace, the scheduler's decision and why), a host, a request id`;

interface CliOptions {
  listen: { host: string; port: number } | undefined;
  file: string | undefined;
  fromEnd: boolean;
  once: boolean;
  quietMs: number;
  match: string | undefined;
}

function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:(.+):)?(\d+)$/.exec(value);
  const port = Number(m?.[2]);
  if (!m || !Number.isInteger(port) || port > 65535) throw new Error(`--listen: expected [HOST:]PORT, got '${value}'`);
  return { host: m[1] ?? '127.0.0.1', port };
}

function parseCli(argv: string[]): CliOptions | 'help' {
  const { values } = parseArgs({
    args: argv, strict: true,
    options: {
      listen: { type: 'string' }, file: { type: 'string' }, 'from-end': { type: 'boolean' }, once: { type: 'boolean' },
      'quiet-ms': { type: 'string' }, match: { type: 'string' }, help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const quietMs = Number(values['quiet-ms'] ?? 500);
  if (!Number.isInteger(quietMs) || quietMs < 0) throw new Error(`--quiet-ms: expected a whole number, got '${values['quiet-ms']}'`);
  if (values.once && !values.file) throw new Error('--once needs --file');
  const listen = values.listen ?? (values.file ? undefined : '127.0.0.1:4318');
  if (values.match === '') throw new Error('--match: expected some text');
  return { listen: listen === undefined ? undefined : parseListen(listen), file: values.file, fromEnd: !!values['from-end'], once: !!values.once, quietMs, match: values.match };
}

function printer(buffer: TraceBuffer, match: string | undefined) {
  return (all: boolean) => {
    for (const { traceId, spans } of buffer.release(Date.now(), all)) {
      if (match === undefined || traceMentions(spans, match)) process.stdout.write(`${formatTrace(traceId, spans).join('\n')}\n`);
    }
  };
}

async function main(argv: string[]): Promise<void> {
  const opts = parseCli(argv);
  if (opts === 'help') return void console.log(USAGE);
  const buffer = new TraceBuffer(opts.quietMs);
  const print = printer(buffer, opts.match);
  const add = (spans: TailSpan[]) => buffer.add(spans, Date.now());
  if (opts.file && opts.once) {
    tailFile(opts.file, { fromEnd: false, once: true, everyMs: 0 }, add);
    return print(true);
  }
  const stops: Array<() => void> = [];
  if (opts.file) stops.push(tailFile(opts.file, { fromEnd: opts.fromEnd, once: false, everyMs: 200 }, add));
  if (opts.listen) {
    const server = await startReceiver(opts.listen.host, opts.listen.port, add);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : opts.listen.port;
    console.error(`trace-tail: listening on http://${opts.listen.host}:${port}/v1/traces`);
    stops.push(() => server.close());
  }
  const timer = setInterval(() => print(false), Math.max(50, Math.min(opts.quietMs, 250)));
  const stop = () => { clearInterval(timer); stops.forEach((s) => s()); print(true); };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`trace-tail: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  process.exitCode = 2;
});
