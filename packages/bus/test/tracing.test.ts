// W3C trace context across a cast: the producer span `send echo` is a child of the
// caller's span, the consumer span `process echo` a child of the producer span (same
// trace), and the handler runs inside it. Manual spans work under jest (TOOLCHAIN.md).
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { EchoServiceService } from '@cellsched/wire';
import { activeTraceParent, Bus, withSavedTrace } from '../src';
import { createVhost, testLogger, waitFor, type TestVhost } from './support/broker';
import { echo, echoHandler, FAST_RETRY, type Seen } from './support/echo';

const exporter = new InMemorySpanExporter();
let vhost: TestVhost;
let bus: Bus;

beforeAll(async () => {
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  vhost = await createVhost('bus-tracing');
  bus = await Bus.connect({ url: vhost.url, logger: testLogger, name: 'tracing-test' });
});

afterAll(async () => {
  await bus?.close();
  await vhost?.dispose();
  trace.disable();
  context.disable();
  propagation.disable();
});

function spanNamed(name: string, nth = 0): ReadableSpan | undefined {
  return exporter.getFinishedSpans().filter((s) => s.name === name)[nth];
}

it('links caller -> send <topic> -> process <topic> in one trace and runs the handler in it', async () => {
  const seen: Seen[] = [];
  const activeInHandler: (string | undefined)[] = [];
  await bus.serve(
    EchoServiceService,
    {
      echoCast: async (req, ctx) => {
        activeInHandler.push(trace.getActiveSpan()?.spanContext().spanId);
        await echoHandler(seen)(req, ctx);
      },
    },
    { server: 'traced', maxDeliveries: 2, retryBackoff: FAST_RETRY },
  );
  const caller = trace.getTracer('test').startSpan('POST /servers');
  await context.with(trace.setSpan(context.active(), caller), () =>
    bus.castClient(EchoServiceService).cast('echoCast', echo(1, 1), { server: 'traced' }),
  );
  caller.end();
  await waitFor('two process spans', () => spanNamed('process echo', 1));

  const send = spanNamed('send echo')!;
  const [failed, succeeded] = [spanNamed('process echo', 0)!, spanNamed('process echo', 1)!];
  expect(send.kind).toBe(SpanKind.PRODUCER);
  expect(send.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
  expect(send.attributes).toMatchObject({
    'messaging.system': 'rabbitmq',
    'messaging.destination.name': 'cellsched',
    'messaging.rabbitmq.destination.routing_key': 'echo.traced',
    'rpc.method': 'echo_cast',
  });
  for (const process of [failed, succeeded]) {
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.spanContext().traceId).toBe(caller.spanContext().traceId);
    expect(process.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
  }
  expect(failed.status.code).toBe(SpanStatusCode.ERROR);
  expect(failed.attributes['messaging.rabbitmq.delivery_attempt']).toBe(1);
  expect(succeeded.attributes['messaging.rabbitmq.delivery_attempt']).toBe(2);
  expect(activeInHandler).toEqual([failed.spanContext().spanId, succeeded.spanContext().spanId]);
  expect(seen[1]!.ctx.logger.bindings()).toMatchObject({
    trace_id: caller.spanContext().traceId,
    span_id: succeeded.spanContext().spanId,
    attempt: 2,
  });
  expect(seen[0]!.ctx.headers.traceparent).toBe(`00-${send.spanContext().traceId}-${send.spanContext().spanId}-01`);
});

it('a saved traceparent resumes its trace later without a message (withSavedTrace); none or a malformed one starts a new trace', async () => {
  const caller = trace.getTracer('test').startSpan('schedule');
  const saved = context.with(trace.setSpan(context.active(), caller), () => activeTraceParent());
  caller.end();
  expect(saved).toBe(`00-${caller.spanContext().traceId}-${caller.spanContext().spanId}-01`);
  let inside: string | undefined;
  await withSavedTrace('build watchdog', saved, async () => {
    inside = trace.getActiveSpan()?.spanContext().traceId;
  });
  const resumed = spanNamed('build watchdog')!;
  expect(resumed.spanContext().traceId).toBe(caller.spanContext().traceId);
  expect(resumed.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
  expect(inside).toBe(caller.spanContext().traceId);
  for (const bad of [undefined, null, '', 'not-a-traceparent']) {
    await withSavedTrace(`fresh ${String(bad)}`, bad, async () => undefined);
    const fresh = spanNamed(`fresh ${String(bad)}`)!;
    expect(fresh.parentSpanContext).toBeUndefined();
    expect(fresh.spanContext().traceId).not.toBe(caller.spanContext().traceId);
  }
  await expect(
    withSavedTrace('fails', saved, async () => {
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');
  expect(spanNamed('fails')?.status.code).toBe(SpanStatusCode.ERROR);
  expect(activeTraceParent()).toBeUndefined(); // no active span
});
