// "One trace id across a cast (publish → consume) and a gRPC call": the demo runs in a
// child process with the real SDK (OTel cannot patch modules inside jest), exports to a
// JSON-lines file, and this test reads the spans and the log lines back.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TailSpan, spansFromRequest } from '../src/trace-tail/otlp-json';
import { buildDemo, privateVhost, runDemo, signalIdle, startTraceTail } from './support/demo';

let dir: string;
let vhost: Awaited<ReturnType<typeof privateVhost>>;
let spans: TailSpan[];
let resources: Array<Record<string, unknown>>;
let logs: Array<Record<string, unknown>>;

function one(pred: (s: TailSpan) => boolean, what: string): TailSpan {
  const found = spans.filter(pred);
  if (found.length !== 1) throw new Error(`expected one ${what} span, found ${found.length}: ${spans.map((s) => s.name).join(', ')}`);
  return found[0] as TailSpan;
}

function logLine(msg: string): Record<string, unknown> {
  const line = logs.find((l) => l['msg'] === msg);
  if (!line) throw new Error(`no log line '${msg}' in ${logs.length} lines`);
  return line;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cellsched-trace-'));
  buildDemo();
  vhost = await privateVhost('trace-test');
  const file = join(dir, 'spans.jsonl');
  const stdout = await runDemo(file, vhost.url);
  logs = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(
      (l) =>
        JSON.parse(l) as { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> } }> },
    );
  spans = lines.flatMap((l) => spansFromRequest(l));
  resources = lines.flatMap((l) =>
    l.resourceSpans.map((rs) => Object.fromEntries(rs.resource.attributes.map((a) => [a.key, a.value.stringValue]))),
  );
}, 240_000);

afterAll(async () => {
  await vhost?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('exports standard OTLP JSON lines with the service, host and cell as resource attributes', () => {
  expect(resources.length).toBeGreaterThan(0);
  for (const r of resources) {
    expect(r).toMatchObject({ 'service.name': 'trace-demo', 'host.name': 'demo-host', 'cellsched.cell': 'cell1' });
    expect(Object.keys(r)).not.toContain('process.command_args');
  }
});

it('parents the gRPC server span on the gRPC client span, in one trace', () => {
  const client = one((s) => s.kind === 'client' && s.name.endsWith('cellsched.v1.EchoService/Echo'), 'gRPC client');
  const server = one((s) => s.kind === 'server' && s.name.endsWith('cellsched.v1.EchoService/Echo'), 'gRPC server');
  expect(server.parentSpanId).toBe(client.spanId);
  expect(server.traceId).toBe(client.traceId);
  expect(server.attributes['cellsched.request_id']).toBe('req-trace-demo');
});

it('carries the same trace id through the cast: publish under the handler, consume under the publish', () => {
  const server = one((s) => s.kind === 'server', 'gRPC server');
  const send = one((s) => s.kind === 'producer' && s.name === 'send echo', 'send');
  const consume = one((s) => s.kind === 'consumer' && s.name === 'process echo', 'process');
  expect(send.traceId).toBe(server.traceId);
  expect(consume.traceId).toBe(server.traceId);
  expect(send.parentSpanId).toBe(server.spanId);
  expect(consume.parentSpanId).toBe(send.spanId);
  expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
});

it('puts the trace id and span id of the active span in the log lines', () => {
  const server = one((s) => s.kind === 'server', 'gRPC server');
  const consume = one((s) => s.kind === 'consumer', 'process');
  expect(logLine('echo handled')).toMatchObject({
    service: 'trace-demo',
    host: 'demo-host',
    cell: 'cell1',
    trace_id: server.traceId,
    span_id: server.spanId,
    request_id: 'req-trace-demo',
    rpc_method: '/cellsched.v1.EchoService/Echo',
    instance_uuid: 'instance-1',
  });
  expect(logLine('cast consumed')).toMatchObject({
    trace_id: server.traceId,
    span_id: consume.spanId,
    instance_uuid: 'instance-1',
    attempt: 1,
    request_id: 'req-trace-demo',
  });
  expect(logLine('calling echo')['trace_id']).toBe(server.traceId);
  expect(logLine('demo done')['trace_id']).toBeUndefined();
});

it('shows the whole trace live in trace-tail, received over OTLP/HTTP JSON', async () => {
  const tail = await startTraceTail();
  let printed = '';
  try {
    await runDemo(tail.endpoint, vhost.url);
  } finally {
    printed = await tail.stop();
  }
  const lines = printed.split('\n').filter(Boolean);
  expect(lines[0]).toMatch(/^trace [0-9a-f]{32} {2}5 span\(s\) {2}1 service\(s\)/);
  const names = lines.slice(1).map((l) => /(?:internal|client|server|producer|consumer) +(\S.*?)(?: {2}|$)/.exec(l)?.[1]?.trim());
  expect(names).toEqual([
    'demo request',
    'grpc.cellsched.v1.EchoService/Echo',
    'grpc.cellsched.v1.EchoService/Echo',
    'send echo',
    'process echo',
  ]);
  expect(printed).toContain('trace-demo@demo-host');
  expect(printed).toContain('cellsched.request_id=req-trace-demo');
}, 90_000);

describe('SIGTERM', () => {
  it('flushes batched spans, then exits by the signal when the process has no handler of its own', async () => {
    const tail = await startTraceTail();
    let exit: Awaited<ReturnType<typeof signalIdle>> | undefined;
    try {
      exit = await signalIdle(tail.endpoint, 'default');
    } finally {
      const printed = await tail.stop();
      expect(printed).toContain('idle work');
    }
    expect(exit).toMatchObject({ code: null, signal: 'SIGTERM' });
    expect(exit.ms).toBeLessThan(4000);
  }, 60_000);

  it('flushes but leaves the exit to a process that handles the signal itself', async () => {
    const tail = await startTraceTail();
    let exit: Awaited<ReturnType<typeof signalIdle>> | undefined;
    try {
      exit = await signalIdle(tail.endpoint, 'own-handler');
    } finally {
      const printed = await tail.stop();
      expect(printed).toContain('idle work');
      expect(printed).toContain('graceful stop');
    }
    expect(exit).toMatchObject({ code: 0, signal: null });
  }, 60_000);
});
