// "A kept trace is whole": the story demo (test/trace-demo/src/story.ts) runs in a child process
// with the real SDK, the default story sampler (database spans capped at 3 per trace), real
// PostgreSQL, RabbitMQ and gRPC. A create's trace must be in the span file whole — HTTP root,
// gRPC client and server, the cast and its consumer, three database spans — and a read and a
// heartbeat cast not at all. Then the same through trace-tail as the collector: one command
// (`trace-tail --collector URL --match SERVER_UUID`) prints that trace whole.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type TailSpan, spansFromRequest } from '../src/trace-tail/otlp-json';
import { TRACE_TAIL, buildDemo, privateVhost, runStory, startTraceTail } from './support/demo';

const run = promisify(execFile);
const SERVER_UUID = '5e4f0c2a-8d1b-4c3e-9f70-000000000042';

let dir: string;
let vhost: Awaited<ReturnType<typeof privateVhost>>;
let spans: TailSpan[];
let logs: Array<Record<string, unknown>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cellsched-story-'));
  buildDemo();
  vhost = await privateVhost('story-test');
  const file = join(dir, 'spans.jsonl');
  const stdout = await runStory(file, vhost.url, SERVER_UUID);
  logs = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  spans = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => spansFromRequest(JSON.parse(l)));
}, 240_000);

afterAll(async () => {
  await vhost?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

const consumedLog = (work: string) => logs.find((l) => l['msg'] === 'cast consumed' && l['work'] === work) ?? {};

it('keeps the create as one whole tree: HTTP root, gRPC both sides, the cast, its consumer, the capped database spans', () => {
  expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
  const ids = new Set(spans.map((s) => s.spanId));
  const roots = spans.filter((s) => !ids.has(s.parentSpanId));
  expect(
    roots.map((r) => [
      r.kind,
      r.name,
      r.attributes['url.path'],
      r.attributes['cellsched.sampled_by'],
      r.attributes['cellsched.instance_uuids'],
    ]),
  ).toEqual([['server', 'POST', '/v2.1/servers', 'story-request', SERVER_UUID]]);
  const story = spans
    .filter((s) => !s.name.startsWith('pg'))
    .map((s) => `${s.kind} ${s.name}`)
    .sort();
  expect(story).toEqual(
    [
      'client grpc.cellsched.v1.EchoService/Echo',
      'consumer process echo',
      'producer send echo',
      'server POST',
      'server grpc.cellsched.v1.EchoService/Echo',
    ].sort(),
  );
  // the handler and the consumer made 6 database spans (3 connects, 3 queries): the first 3 kept
  expect(spans.filter((s) => s.name.startsWith('pg'))).toHaveLength(3);
  expect(consumedLog('POST /v2.1/servers')['trace_id']).toBe(roots[0]?.traceId);
});

it('drops the read and the heartbeat whole, while their logs keep a (not sampled) trace id', () => {
  for (const work of ['GET /v2.1/servers/x', 'heartbeat']) {
    const line = consumedLog(work);
    expect(line['trace_id']).toMatch(/^[0-9a-f]{32}$/);
    expect(line['trace_flags']).toBe('00');
    expect(spans.some((s) => s.traceId === line['trace_id'])).toBe(false);
  }
});

it('reads the create whole from trace-tail as the collector, with one command', async () => {
  const tail = await startTraceTail(['--out', join(dir, 'collected', 'spans.jsonl')]);
  let printed = '';
  let queried = '';
  try {
    await runStory(tail.endpoint, vhost.url, SERVER_UUID);
    queried = (await run(process.execPath, [TRACE_TAIL, '--collector', tail.endpoint, '--match', SERVER_UUID], { timeout: 30_000 })).stdout;
  } finally {
    printed = await tail.stop();
  }
  const header = /^trace ([0-9a-f]{32}) {2}8 span\(s\) {2}1 service\(s\)/;
  expect(queried.split('\n')[0]).toMatch(header);
  for (const name of ['POST', 'grpc.cellsched.v1.EchoService/Echo', 'send echo', 'process echo', 'pg.query:SELECT'])
    expect(queried).toContain(`  ${name}`);
  // and as the collector prints it (docker compose logs -f traces): the same trace, nothing else
  expect(printed.split('\n').filter((l) => l.startsWith('trace '))).toEqual([queried.split('\n')[0]]);
  const collected = readFileSync(join(dir, 'collected', 'spans.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => spansFromRequest(JSON.parse(l)));
  expect(collected).toHaveLength(8);
}, 90_000);
