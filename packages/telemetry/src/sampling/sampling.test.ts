import { ROOT_CONTEXT, SpanKind, TraceFlags, trace, type Span, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { PerTraceCap, TokenBucket } from './budgets';
import { parseRequestPattern, requestMatches } from './request-patterns';
import { DEFAULT_SAMPLING, type SpanFacts, SamplingPolicy, samplingProblems } from './sampling-policy';
import { StorySampler } from './story-sampler';

const T = 'a'.repeat(32);
const post = (path: string, method = 'POST'): Pick<SpanFacts, 'kind' | 'attributes'> => ({
  kind: 'server',
  attributes: { 'http.request.method': method, 'url.path': path },
});
const root = (facts: Partial<SpanFacts>): SpanFacts => ({
  traceId: T,
  name: 'x',
  kind: 'internal',
  attributes: {},
  parent: 'none',
  ...facts,
});

describe('request patterns', () => {
  it.each([
    ['POST /v2.1/servers', 'POST', '/v2.1/servers', true],
    ['POST /v2.1/servers', 'POST', '/v2.1/servers/', true],
    ['POST /v2.1/servers', 'post', '/v2.1/servers?x=1', true],
    ['POST /v2.1/servers', 'GET', '/v2.1/servers', false],
    ['POST /v2.1/servers', 'POST', '/v2.1/servers/detail', false],
    ['POST /v2.1/servers/*/action', 'POST', '/v2.1/servers/2d1e8e64-0000-4000-8000-000000000001/action', true],
    ['POST /v2.1/servers/*/action', 'POST', '/v2.1/servers/action', false],
    ['DELETE /v2.1/servers/*', 'DELETE', '/v2.1/servers/abc', true],
    ['DELETE /v2.1/servers/*', 'DELETE', '/v2.1/servers/abc/tags', false],
  ])('%s matches %s %s: %s', (pattern, method, path, expected) => {
    const parsed = parseRequestPattern(pattern);
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(requestMatches(parsed, method, path)).toBe(expected);
  });

  it.each(['', 'POST', '/v2.1/servers', 'post /v2.1/servers', 'POST v2.1/servers', 'POST /a /b'])('refuses %j', (text) => {
    expect(typeof parseRequestPattern(text)).toBe('string');
  });

  it('lists every bad pattern and option at once', () => {
    expect(samplingProblems({ ...DEFAULT_SAMPLING, storyRequests: ['GET', 'POST /ok', 'x y'], otherTracesPerMinute: -1 })).toEqual([
      "request pattern 'GET' is not 'METHOD /path' (e.g. 'POST /v2.1/servers/*/action')",
      "request pattern 'x y' is not 'METHOD /path' (e.g. 'POST /v2.1/servers/*/action')",
      'otherTracesPerMinute must be >= 0',
    ]);
    expect(samplingProblems(DEFAULT_SAMPLING)).toEqual([]);
  });
});

describe('SamplingPolicy with the defaults', () => {
  const policy = () => new SamplingPolicy(DEFAULT_SAMPLING, () => 0);

  it.each<[string, boolean, string, Partial<SpanFacts>]>([
    ['a create', true, 'story-request', post('/v2.1/servers')],
    ['a server action', true, 'story-request', post('/v2.1/servers/u1/action')],
    ['a server delete', true, 'story-request', post('/v2.1/servers/u1', 'DELETE')],
    ['a server read', false, 'other', post('/v2.1/servers/u1', 'GET')],
    ['a list', false, 'other', post('/v2.1/servers/detail', 'GET')],
    ['placement REST (a compute refreshing its inventory)', false, 'other', post('/resource_providers/u1/inventories', 'PUT')],
    [
      'a heartbeat cast outside any request',
      false,
      'other',
      { kind: 'producer', name: 'send conductor', attributes: { 'rpc.method': 'service_heartbeats' } },
    ],
    ['a sweeper re-cast of a build request saved without a trace', false, 'other', { name: 'build request re-cast' }],
    ['a POST that is no API request (a client span)', false, 'other', { kind: 'client', attributes: post('/v2.1/servers').attributes }],
    ['any child of a kept span', true, 'parent', { parent: 'sampled', kind: 'consumer', name: 'process conductor' }],
    ['any child of a dropped span', false, 'parent', { parent: 'unsampled', ...post('/v2.1/servers') }],
    [
      'a database span in a kept trace (no database spans by default)',
      false,
      'db-cap',
      { parent: 'sampled', name: 'pg.query:SELECT cellsched_api' },
    ],
    ['a database span outside any trace', false, 'db-outside-kept-trace', { name: 'pg-pool.connect' }],
  ])('%s: keep=%s by %s', (_what, keep, rule, facts) => {
    expect(policy().decide(root(facts))).toEqual({ keep, rule });
  });
});

describe('SamplingPolicy budgets', () => {
  it('keeps database spans of a kept trace up to the cap per trace, never those of a dropped one', () => {
    const p = new SamplingPolicy({ ...DEFAULT_SAMPLING, dbSpansPerTrace: 2 });
    const db = (traceId: string, parent: SpanFacts['parent']) => p.decide(root({ traceId, parent, name: 'pg.query:SELECT x' })).keep;
    expect([db('t1', 'sampled'), db('t1', 'sampled'), db('t1', 'sampled'), db('t2', 'sampled'), db('t3', 'unsampled')]).toEqual([
      true,
      true,
      false,
      true,
      false,
    ]);
    expect(p.decide(root({ traceId: 't4', parent: 'sampled', name: 'q', attributes: { 'db.system.name': 'postgresql' } }))).toEqual({
      keep: true,
      rule: 'db-span',
    });
  });

  it('keeps other roots at the configured rate per minute, and every root in mode all', () => {
    let now = 0;
    const p = new SamplingPolicy({ ...DEFAULT_SAMPLING, otherTracesPerMinute: 2 }, () => now);
    const other = () => p.decide(root({ name: 'audit' })).keep;
    expect([other(), other(), other()]).toEqual([true, true, false]);
    now = 30_000; // half a minute refills one
    expect([other(), other()]).toEqual([true, false]);
    const all = new SamplingPolicy({ ...DEFAULT_SAMPLING, mode: 'all' });
    expect(all.decide(root({ name: 'audit' }))).toEqual({ keep: true, rule: 'all' });
    expect(all.decide(root({ name: 'pg.query:SELECT', parent: 'sampled' })).keep).toBe(false); // the database cap still holds
  });

  it('a token bucket grants bursts up to its size and refills over time; 0 never grants', () => {
    const b = new TokenBucket(60);
    expect(Array.from({ length: 61 }, () => b.take(0)).filter(Boolean)).toHaveLength(60);
    expect(b.take(999)).toBe(false);
    expect(b.take(1000)).toBe(true);
    expect(new TokenBucket(0).take(0)).toBe(false);
  });

  it('the per-trace cap forgets the oldest traces beyond its memory', () => {
    const cap = new PerTraceCap(1, 2);
    expect([cap.take('a'), cap.take('a'), cap.take('b'), cap.take('c')]).toEqual([true, false, true, true]);
    expect(cap.size).toBe(2);
    expect(cap.take('a')).toBe(true); // forgotten: counted again from zero
  });
});

describe('StorySampler in the OpenTelemetry SDK', () => {
  let exporter: InMemorySpanExporter;
  let tracer: Tracer;

  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      sampler: new StorySampler({ ...DEFAULT_SAMPLING, dbSpansPerTrace: 1 }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    tracer = provider.getTracer('test');
  });

  const child = (parent: Span, name: string, kind = SpanKind.INTERNAL): Span =>
    tracer.startSpan(name, { kind }, trace.setSpan(ROOT_CONTEXT, parent));

  /** A request's trace as the services make it: HTTP root, a cast, its consumer, a gRPC call, two queries. */
  function request(method: string, path: string): Span {
    const http = tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } },
      ROOT_CONTEXT,
    );
    const send = child(http, 'send conductor', SpanKind.PRODUCER);
    // across the bus: a remote parent carrying the sampled flag
    const remote = trace.wrapSpanContext({ ...send.spanContext(), isRemote: true });
    const consume = child(remote, 'process conductor', SpanKind.CONSUMER);
    const grpc = child(consume, 'grpc.cellsched.v1.SchedulerService/SelectDestinations', SpanKind.CLIENT);
    for (const s of [
      child(grpc, 'pg.query:SELECT a', SpanKind.CLIENT),
      child(grpc, 'pg.query:SELECT b', SpanKind.CLIENT),
      grpc,
      consume,
      send,
      http,
    ])
      s.end();
    return http;
  }

  it('keeps a create whole (one database span, the cap) and drops a read whole, context still propagated', () => {
    const create = request('POST', '/v2.1/servers');
    const read = request('GET', '/v2.1/servers/u1');
    const spans = exporter.getFinishedSpans();
    expect(spans.every((s) => s.spanContext().traceId === create.spanContext().traceId)).toBe(true);
    expect(spans.map((s) => s.name).sort()).toEqual(
      ['POST', 'grpc.cellsched.v1.SchedulerService/SelectDestinations', 'pg.query:SELECT a', 'process conductor', 'send conductor'].sort(),
    );
    expect(spans.find((s) => s.name === 'POST')?.attributes['cellsched.sampled_by']).toBe('story-request');
    expect(spans.find((s) => s.name === 'send conductor')?.attributes['cellsched.sampled_by']).toBeUndefined();
    // the dropped read still has a valid trace id (logs keep their trace_id), unsampled
    expect(trace.isSpanContextValid(read.spanContext())).toBe(true);
    expect(read.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(0);
    expect(read.isRecording()).toBe(false);
  });
});
