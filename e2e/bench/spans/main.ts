// `pnpm bench spans --spans STATE/spans.jsonl [--api URL/v2.1 | --port-offset P] [--creates 500] [--concurrency 20] [--out FILE.json]`:
// the span volume of a workload against a running stack (`pnpm stack up ...`). Creates servers
// through the API, waits until every one is ACTIVE or ERROR (polling the list, as a benchmark
// does), then reports the bytes and spans written meanwhile — by service, database spans, which
// roots — and one rescheduled server's trace as `trace-tail --match` prints it.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { planEndpoints } from '../../endpoints';

const ROOT = join(__dirname, '../../..');
const IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6';

interface Span {
  service: string;
  name: string;
  traceId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
}
type Server = { id: string; status: string };

const { values: args } = parseArgs({
  options: {
    spans: { type: 'string' },
    api: { type: 'string' },
    'port-offset': { type: 'string', default: '0' },
    creates: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '20' },
    out: { type: 'string' },
  },
});

/** The span file and its rotated files (`spans.<time>-<pid>-<n>.jsonl`), oldest first. */
function spanFiles(file: string): string[] {
  const rotated = readdirSync(dirname(file))
    .filter((n) => /^spans\.\d{8}T\d{9}Z-\d+-\d{6}\.jsonl$/.test(n))
    .sort()
    .map((n) => join(dirname(file), n));
  return [...rotated, ...(readdirSync(dirname(file)).includes(basename(file)) ? [file] : [])];
}
const sizes = (file: string) => new Map(spanFiles(file).map((f) => [f, statSync(f).size]));

/** The compute API: --api (a base URL ending in /v2.1), else the plan's at --port-offset. */
const apiUrl = (): string => args.api ?? planEndpoints(Number(args['port-offset'])).api;

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const r = await fetch(`${apiUrl()}${path}`, {
    method,
    headers: { 'x-auth-token': 'admin', 'content-type': 'application/json', 'openstack-api-version': 'compute 2.62' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** One create; a 5xx (an overloaded machine: the api's pool timed out) is retried like a client would, 3 times. */
async function createOne(i: number): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const r = await api<{ server: { id: string } }>('POST', '/servers', {
      server: { name: `spans-${i}`, flavorRef: '1', imageRef: IMAGE, networks: 'none' },
    });
    if (r.status === 202) return r.body.server.id;
    if (r.status < 500 || attempt >= 4) throw new Error(`create ${i}: HTTP ${r.status}`);
    await new Promise((res) => setTimeout(res, 1000 * attempt));
  }
}

async function createAll(n: number, concurrency: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) ids.push(await createOne(next++));
    }),
  );
  return ids;
}

async function settle(ids: string[]): Promise<Map<string, Server>> {
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    const servers = new Map<string, Server>();
    for (let marker = ''; ;) {
      const r = await api<{ servers: Server[] }>('GET', `/servers/detail?limit=1000${marker ? `&marker=${marker}` : ''}`);
      r.body.servers.forEach((s) => servers.set(s.id, s));
      if (r.body.servers.length < 1000) break;
      marker = r.body.servers.at(-1)?.id ?? '';
    }
    if (ids.every((id) => ['ACTIVE', 'ERROR'].includes(servers.get(id)?.status ?? ''))) return servers;
    if (Date.now() > deadline) throw new Error('servers not settled after 15 minutes');
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** The spans written after `before` (file → size then): the new part of each file. */
function newSpans(before: Map<string, number>): Span[] {
  const out: Span[] = [];
  for (const f of spanFiles(args.spans ?? '')) {
    const text = readFileSync(f)
      .subarray(before.get(f) ?? 0)
      .toString('utf8');
    for (const line of text.split('\n')) {
      if (!line) continue;
      for (const rs of JSON.parse(line).resourceSpans ?? []) {
        const service = String(rs.resource?.attributes?.find((a: { key: string }) => a.key === 'service.name')?.value?.stringValue);
        for (const ss of rs.scopeSpans ?? [])
          for (const sp of ss.spans ?? []) {
            const attributes = Object.fromEntries(
              (sp.attributes ?? []).map((a: { key: string; value: Record<string, unknown> }) => [a.key, Object.values(a.value)[0]]),
            );
            out.push({ service, name: sp.name, traceId: sp.traceId, parentSpanId: sp.parentSpanId ?? '', attributes });
          }
      }
    }
  }
  return out;
}

const countBy = <T>(xs: T[], key: (x: T) => string) =>
  Object.fromEntries(
    [...xs.reduce((m, x) => m.set(key(x), (m.get(key(x)) ?? 0) + 1), new Map<string, number>())].sort((a, b) => b[1] - a[1]),
  );

/** A server whose create was rescheduled inside its cell (a cell conductor's build_instances in its trace) and ended ACTIVE. */
function rescheduled(spans: Span[], servers: Map<string, Server>): string | undefined {
  const retried = new Set(
    spans.filter((s) => s.service === 'cell-conductor' && s.attributes['rpc.method'] === 'build_instances').map((s) => s.traceId),
  );
  const root = spans.find(
    (s) =>
      retried.has(s.traceId) && s.parentSpanId === '' && servers.get(String(s.attributes['cellsched.instance_uuids']))?.status === 'ACTIVE',
  );
  return root === undefined ? undefined : String(root.attributes['cellsched.instance_uuids']);
}

async function main(): Promise<void> {
  if (!args.spans) throw new Error('--spans STATE_DIR/spans.jsonl is required');
  const before = sizes(args.spans);
  const t0 = Date.now();
  const ids = await createAll(Number(args.creates), Number(args.concurrency));
  const servers = await settle(ids);
  const settledMs = Date.now() - t0;
  await new Promise((r) => setTimeout(r, 5000)); // the last spans (the cell conductors' ACTIVE steps)
  const after = sizes(args.spans);
  const spans = newSpans(before);
  const bytes = [...after].reduce((n, [f, size]) => n + size - (before.get(f) ?? 0), 0);
  const report = {
    creates: ids.length,
    settledMs,
    statuses: countBy(ids, (id) => servers.get(id)?.status ?? '?'),
    spanBytes: bytes,
    spanBytesPerCreate: Math.round(bytes / ids.length),
    spans: spans.length,
    traces: new Set(spans.map((s) => s.traceId)).size,
    dbSpans: spans.filter((s) => s.name.startsWith('pg')).length,
    spansByService: countBy(spans, (s) => s.service),
    roots: countBy(
      spans.filter((s) => s.parentSpanId === ''),
      (s) =>
        `${s.service} ${s.name} ${String(s.attributes['url.path'] ?? s.attributes['rpc.method'] ?? '').replace(/[0-9a-f-]{36}/g, '{id}')}`,
    ),
    rotatedFiles: spanFiles(args.spans).length - 1,
    rescheduledServer: rescheduled(spans, servers),
  };
  console.log(JSON.stringify(report, null, 2));
  if (args.out) writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`);
  if (report.rescheduledServer) {
    console.log(`\ntrace-tail --file ${args.spans} --once --match ${report.rescheduledServer}:`);
    console.log(
      execFileSync(
        'node',
        ['packages/telemetry/dist/bin/trace-tail.js', '--file', args.spans, '--once', '--match', report.rescheduledServer],
        { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 30 },
      ),
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
