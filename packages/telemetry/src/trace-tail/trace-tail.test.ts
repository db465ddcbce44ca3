import { formatDuration, formatTrace, traceMentions, treeOrder } from './format';
import { type TailSpan, spansFromRequest } from './otlp-json';
import { TraceBuffer } from './trace-buffer';

const T = 'a'.repeat(32);

function otlp(service: string, spans: Array<Record<string, unknown>>) {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: service } },
            { key: 'host.name', value: { stringValue: `${service}-1` } },
          ],
        },
        scopeSpans: [{ scope: { name: 'x' }, spans }],
      },
    ],
  };
}

function raw(
  spanId: string,
  parentSpanId: string,
  name: string,
  kind: number,
  startMs: number,
  durMs: number,
  extra: Record<string, unknown> = {},
) {
  const start = BigInt(startMs) * 1_000_000n;
  return {
    traceId: T,
    spanId,
    parentSpanId,
    name,
    kind,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + BigInt(durMs) * 1_000_000n),
    ...extra,
  };
}

const request = [
  otlp('scheduler', [
    raw('b2', 'a1', 'cellsched.v1.SchedulerService/SelectDestinations', 2, 1002, 40, {
      attributes: [
        { key: 'cellsched.request_id', value: { stringValue: 'req-1' } },
        { key: 'rpc.grpc.status_code', value: { intValue: '0' } },
      ],
    }),
  ]),
  otlp('super-conductor', [
    raw('a1', '', 'process conductor', 5, 1000, 50),
    raw('c3', 'a1', 'send compute', 4, 1045, 3, { status: { code: 2, message: 'unroutable' } }),
  ]),
];

describe('spansFromRequest', () => {
  it('flattens resource, kind, status, duration and attributes', () => {
    const [span] = spansFromRequest(request[0]);
    expect(span).toMatchObject({
      traceId: T,
      spanId: 'b2',
      parentSpanId: 'a1',
      kind: 'server',
      service: 'scheduler',
      host: 'scheduler-1',
      durationMs: 40,
      status: 'UNSET',
      attributes: { 'cellsched.request_id': 'req-1', 'rpc.grpc.status_code': 0 },
    });
  });

  it.each([null, 42, 'text', { resourceSpans: 'no' }, { resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'no ids' }] }] }] }])(
    'skips malformed input %j without throwing',
    (body) => {
      expect(spansFromRequest(body)).toEqual([]);
    },
  );
});

describe('formatTrace', () => {
  const spans: TailSpan[] = request.flatMap((r) => spansFromRequest(r));

  it('orders spans as a tree: parents first, siblings by start time', () => {
    expect(treeOrder(spans).map(({ span, depth }) => [span.spanId, depth])).toEqual([
      ['a1', 0],
      ['b2', 1],
      ['c3', 1],
    ]);
  });

  it('prints a header and one line per span with service@host, kind, status and key attributes', () => {
    const lines = formatTrace(T, spans);
    expect(lines[0]).toBe(`trace ${T}  3 span(s)  2 service(s)  50.0 ms  1 ERROR`);
    expect(lines[1]).toMatch(/50\.0 ms {2}UNSET {2}super-conductor@super-conductor-1 +consumer {2}process conductor$/);
    expect(lines[2]).toContain('scheduler@scheduler-1');
    expect(lines[2]).toContain('  cellsched.v1.SchedulerService/SelectDestinations  cellsched.request_id=req-1  rpc.grpc.status_code=0');
    expect(lines[3]).toContain('ERROR(unroutable)');
  });

  it('keeps orphans (parent not received) as roots', () => {
    const orphan = spansFromRequest(otlp('compute', [raw('d4', 'ff', 'process compute', 5, 1100, 2)]));
    expect(
      treeOrder([...spans, ...orphan])
        .filter((e) => e.depth === 0)
        .map((e) => e.span.spanId),
    ).toEqual(['a1', 'd4']);
  });

  it("prints a decision's attributes in full and its events under the span, in order", () => {
    const decision = spansFromRequest(
      otlp('scheduler', [
        raw('e5', '', 'SelectDestinations', 2, 2000, 9, {
          attributes: [
            { key: 'cellsched.scheduler.chosen', value: { stringValue: 'cell1-compute-0042' } },
            { key: 'cellsched.scheduler.alternates', value: { stringValue: 'cell1-compute-0007+cell1-compute-0913' } },
          ],
          events: [
            {
              name: 'scheduler.stage allocation_candidates',
              attributes: [
                { key: 'cellsched.scheduler.hosts_before', value: { intValue: '1000' } },
                { key: 'cellsched.scheduler.hosts_after', value: { intValue: '1000' } },
              ],
            },
            {
              name: 'scheduler.stage ComputeFilter',
              attributes: [
                { key: 'cellsched.scheduler.hosts_before', value: { intValue: '50' } },
                { key: 'cellsched.scheduler.hosts_after', value: { intValue: '48' } },
                { key: 'cellsched.scheduler.reason', value: { stringValue: 'service disabled (2 hosts)' } },
              ],
            },
            {
              name: 'scheduler.weighed',
              attributes: [{ key: 'cellsched.scheduler.top', value: { stringValue: 'cell1-compute-0042=1.900 cell1-compute-0007=1.850' } }],
            },
          ],
        }),
      ]),
    );
    const lines = formatTrace(T, decision);
    expect(lines[1]).toContain('chosen=cell1-compute-0042  alternates=cell1-compute-0007+cell1-compute-0913');
    expect(lines.slice(2).map((l) => l.trim())).toEqual([
      '· scheduler.stage allocation_candidates  hosts_before=1000  hosts_after=1000',
      '· scheduler.stage ComputeFilter  hosts_before=50  hosts_after=48  reason=service disabled (2 hosts)',
      '· scheduler.weighed  top=cell1-compute-0042=1.900 cell1-compute-0007=1.850',
    ]);
  });

  it('matches a trace by any span name or attribute value (trace-tail --match)', () => {
    expect(traceMentions(spans, 'req-1')).toBe(true);
    expect(traceMentions(spans, 'SchedulerService')).toBe(true);
    expect(traceMentions(spans, 'req-2')).toBe(false);
  });

  it('formats durations in ms below a second and s above', () => {
    expect(formatDuration(12.34)).toBe('12.3 ms');
    expect(formatDuration(1500)).toBe('1.50 s');
  });
});

describe('TraceBuffer', () => {
  it('releases a trace only once it has been quiet, and everything when asked', () => {
    const buffer = new TraceBuffer(500);
    const spans = request.flatMap((r) => spansFromRequest(r));
    buffer.add(spans.slice(0, 1), 0);
    buffer.add(spans.slice(1), 400);
    expect(buffer.release(800)).toEqual([]);
    expect(buffer.release(900).map((t) => t.spans.length)).toEqual([3]);
    expect(buffer.size).toBe(0);
    buffer.add(spans.slice(0, 1), 1000);
    expect(buffer.release(1000, true)).toHaveLength(1);
  });
});
