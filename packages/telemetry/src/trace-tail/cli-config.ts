import { type Config, defineConfig, loadConfig } from '@cellsched/config';
import { DEFAULT_ROTATION, type RotationOptions } from '../rotating-file';

const MB = 1024 * 1024;

/** trace-tail's options, as data: flags (`--listen 0.0.0.0:4318`) or env (a compose service's). */
export const traceTailSchema = defineConfig({
  listen: {
    type: 'string',
    env: 'CELLSCHED_TRACE_TAIL_LISTEN',
    help: 'Receive OTLP/HTTP JSON on [HOST:]PORT (default 127.0.0.1:4318 when neither --file nor --collector is given; 0.0.0.0:4318 in a container). Also serves GET /v1/traces?match=TEXT and GET /healthz.',
  },
  file: {
    type: 'string',
    env: 'CELLSCHED_TRACE_TAIL_FILE',
    help: 'Read a span file (OTLP JSON lines, exporter file) and its rotated files, and follow it.',
  },
  fromEnd: { type: 'bool', env: 'CELLSCHED_TRACE_TAIL_FROM_END', default: false, help: 'With --file: skip what the files already hold.' },
  once: { type: 'bool', env: 'CELLSCHED_TRACE_TAIL_ONCE', default: false, help: 'With --file: print what the files hold, then exit.' },
  collector: {
    type: 'url',
    env: 'CELLSCHED_TRACE_TAIL_COLLECTOR',
    protocols: ['http:', 'https:'],
    help: "Ask a running trace-tail --listen (e.g. http://127.0.0.1:4318, the compose deployment's traces service) for the traces that mention --match, print them and exit.",
  },
  match: {
    type: 'string',
    env: 'CELLSCHED_TRACE_TAIL_MATCH',
    help: 'Print only traces where a span name or attribute value contains this text: a server uuid (its create, whole), a host, a request id.',
  },
  limit: {
    type: 'int',
    env: 'CELLSCHED_TRACE_TAIL_LIMIT',
    default: 20,
    min: 1,
    max: 1000,
    help: 'With --collector: at most this many traces, the latest.',
  },
  quietMs: {
    type: 'int',
    env: 'CELLSCHED_TRACE_TAIL_QUIET_MS',
    default: 500,
    min: 0,
    max: 600_000,
    help: 'Print a trace once no span of it arrived for this many ms.',
  },
  out: {
    type: 'string',
    env: 'CELLSCHED_TRACE_TAIL_OUT',
    help: 'With --listen: also append what is received to this span file (OTLP JSON lines), rotated; queries then search its whole history.',
  },
  outMaxMb: {
    type: 'int',
    env: 'CELLSCHED_TRACE_TAIL_OUT_MAX_MB',
    default: DEFAULT_ROTATION.maxBytes / MB,
    min: 0,
    max: 100_000,
    help: 'Rotate --out at this many MB (0: never).',
  },
  outKeep: {
    type: 'int',
    env: 'CELLSCHED_TRACE_TAIL_OUT_KEEP',
    default: DEFAULT_ROTATION.keep,
    min: 1,
    max: 1000,
    help: 'Files of --out kept in all, the active one included.',
  },
  keepSpans: {
    type: 'int',
    env: 'CELLSCHED_TRACE_TAIL_KEEP_SPANS',
    default: 50_000,
    min: 0,
    max: 10_000_000,
    help: 'With --listen: spans held in memory for the queries that --out cannot answer (no --out, or no --match); the oldest traces are forgotten first.',
  },
});

export type TraceTailConfig = Config<typeof traceTailSchema>;

/** What trace-tail does, from its loaded options. */
export type TraceTailPlan =
  | { mode: 'query'; collector: string; match: string | undefined; limit: number }
  | { mode: 'read'; file: string; match: string | undefined }
  | {
      mode: 'follow';
      listen: { host: string; port: number } | undefined;
      file: string | undefined;
      fromEnd: boolean;
      quietMs: number;
      match: string | undefined;
      out: { file: string; rotation: RotationOptions } | undefined;
      keepSpans: number;
    };

function parseListen(value: string, problems: string[]): { host: string; port: number } | undefined {
  const m = /^(?:(.+):)?(\d+)$/.exec(value);
  const port = Number(m?.[2]);
  if (!m || !Number.isInteger(port) || port > 65535) {
    problems.push(`--listen: expected [HOST:]PORT, got '${value}'`);
    return undefined;
  }
  return { host: m[1] ?? '127.0.0.1', port };
}

function checks(c: TraceTailConfig): string[] {
  const problems: string[] = [];
  if (c.match === '') problems.push('--match: expected some text');
  if (c.collector !== undefined && (c.listen !== undefined || c.file !== undefined))
    problems.push('--collector asks a running collector: not with --listen or --file');
  if (c.once && c.file === undefined) problems.push('--once needs --file');
  if (c.once && c.listen !== undefined) problems.push('--once reads a file and exits: not with --listen');
  if (c.out !== undefined && c.listen === undefined) problems.push('--out writes what --listen receives: give --listen');
  return problems;
}

/** Loads trace-tail's options (argv, then env) into what to do; throws listing every problem. */
export function traceTailPlan(argv: readonly string[], env?: Readonly<Record<string, string | undefined>>): TraceTailPlan {
  const c = loadConfig(traceTailSchema, { argv, env, file: false });
  const problems = checks(c);
  const listenText = c.listen ?? (c.file === undefined && c.collector === undefined ? '127.0.0.1:4318' : undefined);
  const listen = listenText === undefined ? undefined : parseListen(listenText, problems);
  if (problems.length > 0) throw new Error(problems.join('; '));
  if (c.collector !== undefined) return { mode: 'query', collector: c.collector, match: c.match, limit: c.limit };
  if (c.once && c.file !== undefined) return { mode: 'read', file: c.file, match: c.match };
  const out = c.out === undefined ? undefined : { file: c.out, rotation: { maxBytes: c.outMaxMb * MB, keep: c.outKeep } };
  return { mode: 'follow', listen, file: c.file, fromEnd: c.fromEnd, quietMs: c.quietMs, match: c.match, out, keepSpans: c.keepSpans };
}
