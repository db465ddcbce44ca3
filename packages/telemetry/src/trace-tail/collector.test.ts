import { appendFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RotatingFile, rotatedFiles } from '../rotating-file';
import { traceTailPlan } from './cli-config';
import { searchSpanFiles } from './file-search';
import { tracesFromJson, tracesToJson } from './found-trace';
import { type TailSpan, spansFromRequest } from './otlp-json';
import { startReceiver } from './receiver';
import { RecentTraces } from './recent-traces';
import { tailFile } from './sources';

const UUID = '2d1e8e64-0000-4000-8000-000000000001';
const tid = (n: number) => n.toString(16).padStart(32, '0');

/** One OTLP export request (one line of a span file) with spans of `service`. */
function request(service: string, spans: Array<{ trace: number; id: string; parent?: string; name: string; uuid?: string }>) {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: service } },
            { key: 'host.name', value: { stringValue: 'h' } },
          ],
        },
        scopeSpans: [
          {
            scope: { name: 's' },
            spans: spans.map((s, i) => ({
              traceId: tid(s.trace),
              spanId: s.id,
              parentSpanId: s.parent ?? '',
              name: s.name,
              kind: 2,
              startTimeUnixNano: String(1_000_000 * (s.trace * 100 + i)),
              endTimeUnixNano: String(1_000_000 * (s.trace * 100 + i + 1)),
              attributes: s.uuid ? [{ key: 'cellsched.instance_uuids', value: { stringValue: s.uuid } }] : [],
            })),
          },
        ],
      },
    ],
  };
}
const line = (r: object) => `${JSON.stringify(r)}\n`;

// a create (trace 1) whose spans are spread over lines and over a rotated file, with other traces around
const CREATE = [
  request('api', [
    { trace: 1, id: 'a1', name: 'POST', uuid: UUID },
    { trace: 2, id: 'b1', name: 'GET' },
  ]),
  request('super-conductor', [{ trace: 1, id: 'a2', parent: 'a1', name: 'process conductor' }]),
  request('scheduler', [
    { trace: 3, id: 'c1', name: 'other' },
    { trace: 1, id: 'a3', parent: 'a2', name: 'SelectDestinations' },
  ]),
  request('cell-conductor', [{ trace: 1, id: 'a4', parent: 'a2', name: 'process conductor' }]),
];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cellsched-collector-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('searchSpanFiles', () => {
  it('finds the whole trace that mentions a server uuid across lines and rotated files, and nothing else', () => {
    const file = join(dir, 'spans.jsonl');
    writeFileSync(join(dir, 'spans.20261126T043500000Z-1-000001.jsonl'), line(CREATE[0] as object) + line(CREATE[1] as object));
    writeFileSync(file, line(CREATE[2] as object) + line(CREATE[3] as object));
    const found = searchSpanFiles(file, UUID, 10);
    expect(found.map((t) => t.traceId)).toEqual([tid(1)]);
    expect(found[0]?.spans.map((s) => `${s.service}:${s.name}`).sort()).toEqual([
      'api:POST',
      'cell-conductor:process conductor',
      'scheduler:SelectDestinations',
      'super-conductor:process conductor',
    ]);
    expect(searchSpanFiles(file, 'process conductor', 10).map((t) => t.traceId)).toEqual([tid(1)]);
    expect(searchSpanFiles(file, 'nowhere', 10)).toEqual([]);
    expect(searchSpanFiles(join(dir, 'missing.jsonl'), UUID, 10)).toEqual([]);
  });

  it('keeps the latest `limit` traces, oldest first', () => {
    const file = join(dir, 'spans.jsonl');
    for (const n of [5, 3, 4]) appendFileSync(file, line(request('api', [{ trace: n, id: `s${n}`, name: 'POST', uuid: 'same' }])));
    expect(searchSpanFiles(file, 'same', 2).map((t) => t.traceId)).toEqual([tid(4), tid(5)]);
  });
});

describe('RecentTraces', () => {
  it('forgets the traces first seen longest ago, whole, beyond its span budget', () => {
    const recent = new RecentTraces(3);
    recent.add(spansFromRequest(CREATE[0]));
    recent.add(spansFromRequest(CREATE[1]));
    expect(recent.find(UUID, 10).map((t) => t.spans.length)).toEqual([2]);
    recent.add(spansFromRequest(CREATE[2])); // 5 spans: trace 1 (the oldest) goes
    expect(recent.find(UUID, 10)).toEqual([]);
    expect(recent.find(undefined, 10).map((t) => t.traceId)).toEqual([tid(2), tid(3)]);
    expect(recent.find(undefined, 1).map((t) => t.traceId)).toEqual([tid(3)]);
    expect(recent.spanCount).toBe(2);
  });
});

describe('the query body', () => {
  it('round-trips spans, start times (bigints) included; malformed parts are skipped', () => {
    const traces = [{ traceId: tid(1), spans: CREATE.flatMap((r) => spansFromRequest(r)).filter((s) => s.traceId === tid(1)) }];
    expect(tracesFromJson(JSON.parse(JSON.stringify(tracesToJson(traces))))).toEqual(traces);
    expect(tracesFromJson({ traces: [{ traceId: 1 }, { traceId: 'x', spans: [{ name: 'no ids' }] }] })).toEqual([
      { traceId: 'x', spans: [] },
    ]);
    expect(tracesFromJson('nothing')).toEqual([]);
  });
});

describe('the receiver', () => {
  let server: Server;
  let base: string;
  const received: unknown[] = [];
  const recent = new RecentTraces(100);
  beforeAll(async () => {
    server = await startReceiver('127.0.0.1', 0, {
      onSpans: (spans, body) => {
        received.push(body);
        recent.add(spans);
      },
      find: (m, l) => recent.find(m, l),
    });
    const a = server.address();
    base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('takes OTLP/HTTP JSON and answers queries for one trace, plus a health check', async () => {
    for (const r of CREATE) {
      const res = await fetch(`${base}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(r),
      });
      expect(res.status).toBe(200);
    }
    expect(received).toEqual(CREATE);
    const res = await fetch(`${base}/v1/traces?match=${UUID}`);
    expect(res.status).toBe(200);
    expect(tracesFromJson(await res.json()).map((t) => [t.traceId, t.spans.length])).toEqual([[tid(1), 4]]);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it.each([
    ['GET', '/v1/traces?limit=0', 400],
    ['GET', '/v1/traces?match=', 400],
    ['GET', '/nothing', 404],
    ['PUT', '/v1/traces', 404],
  ])('%s %s: %s', async (method, path, status) => {
    expect((await fetch(`${base}${path}`, { method })).status).toBe(status);
  });

  it('refuses protobuf and bodies that are not JSON', async () => {
    expect(
      (await fetch(`${base}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: 'x' })).status,
    ).toBe(415);
    expect((await fetch(`${base}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })).status).toBe(
      400,
    );
  });
});

describe('tailFile', () => {
  it('reads the rotated files first, then the active one', () => {
    const file = join(dir, 'spans.jsonl');
    writeFileSync(join(dir, 'spans.20261126T043500000Z-1-000001.jsonl'), line(CREATE[0] as object));
    writeFileSync(file, line(CREATE[1] as object));
    const seen: TailSpan[] = [];
    tailFile(file, { fromEnd: false, once: true, everyMs: 0 }, (s) => seen.push(...s));
    expect(seen.map((s) => s.spanId)).toEqual(['a1', 'b1', 'a2']);
  });

  it('follows the active file across a rotation without losing the lines written just before it', async () => {
    const file = join(dir, 'spans.jsonl');
    const out = new RotatingFile(file, { maxBytes: 2 * line(CREATE[0] as object).length, keep: 10 });
    out.append(line(CREATE[0] as object));
    const seen: string[] = [];
    const stop = tailFile(file, { fromEnd: false, once: false, everyMs: 20 }, (s) => seen.push(...s.map((x) => x.spanId)));
    try {
      await new Promise((r) => setTimeout(r, 100));
      out.append(line(CREATE[1] as object));
      out.append(line(CREATE[2] as object)); // reaches the size: rotated at once, before the next poll
      expect(rotatedFiles(file)).toHaveLength(1);
      expect(existsSync(file)).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      stop();
    }
    expect(seen).toEqual(['a1', 'b1', 'a2', 'c1', 'a3']);
  });
});

describe('traceTailPlan', () => {
  it.each<[string[], Record<string, string>, object]>([
    [[], {}, { mode: 'follow', listen: { host: '127.0.0.1', port: 4318 }, file: undefined, out: undefined }],
    [['--file', 's.jsonl'], {}, { mode: 'follow', listen: undefined, file: 's.jsonl' }],
    [['--file', 's.jsonl', '--once', '--match', UUID], {}, { mode: 'read', file: 's.jsonl', match: UUID }],
    [
      ['--collector', 'http://127.0.0.1:4318', '--match', UUID],
      {},
      { mode: 'query', collector: 'http://127.0.0.1:4318', match: UUID, limit: 20 },
    ],
    [
      [],
      {
        CELLSCHED_TRACE_TAIL_LISTEN: '0.0.0.0:4318',
        CELLSCHED_TRACE_TAIL_OUT: '/traces/spans.jsonl',
        CELLSCHED_TRACE_TAIL_OUT_MAX_MB: '16',
        CELLSCHED_TRACE_TAIL_QUIET_MS: '3000',
      },
      {
        mode: 'follow',
        listen: { host: '0.0.0.0', port: 4318 },
        quietMs: 3000,
        out: { file: '/traces/spans.jsonl', rotation: { maxBytes: 16 * 1024 * 1024, keep: 4 } },
      },
    ],
  ])('%j with env %j', (argv, env, expected) => {
    expect(traceTailPlan(argv, env)).toMatchObject(expected);
  });

  it('lists every problem at once', () => {
    expect(() => traceTailPlan(['--collector', 'http://x:1', '--file', 'f', '--match', '', '--out', 'o'], {})).toThrow(
      '--match: expected some text; --collector asks a running collector: not with --listen or --file; --out writes what --listen receives: give --listen',
    );
    expect(() => traceTailPlan(['--listen', 'nowhere', '--once'], {})).toThrow(
      "--once needs --file; --once reads a file and exits: not with --listen; --listen: expected [HOST:]PORT, got 'nowhere'",
    );
  });
});
