import { randomUUID } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import type { Channel, ConsumeMessage, Options } from 'amqplib';
import type { Logger } from 'pino';
import { backoffDelay, type BackoffPolicy } from './backoff';
import type { MethodEntry, ServiceEntry } from './definitions';
import { BUS_ERROR, BusError, summarizeFailure, type FailureSummary } from './errors';
import { deliveryAttempt, HEADER, headerString, isCompatibleVersion, parseRpcVersion } from './headers';
import type { Publisher } from './publisher';
import type { QueueTopology } from './topology';
import { traceFields, withProcessSpan } from './tracing';

/** What a cast handler learns about the delivery it handles. */
export interface CastContext {
  /** Method in Nova's snake_case (`build_and_run_instance`). */
  readonly method: string;
  /** RPC version the sender stamped on the cast. */
  readonly rpcVersion: string;
  /** 1-based delivery attempt (from the quorum queue's `x-delivery-count`). */
  readonly attempt: number;
  /**
   * Whether this cast may have been handed to a consumer before (the broker's `redelivered` flag,
   * or an attempt above 1): false only for a first delivery, whose effects cannot exist yet.
   */
  readonly redelivered: boolean;
  readonly routingKey: string;
  /** The server the cast is addressed to (`host-12` of `compute.host-12`); undefined for a topic-wide cast. */
  readonly server: string | undefined;
  readonly messageId: string | undefined;
  readonly headers: Readonly<Record<string, unknown>>;
  /** Child of the bus logger with `rpc_method`, `attempt`, `routing_key`, `message_id`, `trace_id`. */
  readonly logger: Logger;
  /** OpenTelemetry context of the `process <topic>` span. */
  readonly otelContext: Context;
}

/**
 * Handles one cast. Delivery is **at-least-once**: the same cast can arrive again after a
 * crash, a lost ack or a broker restart, so a handler must be idempotent. The message is
 * acked only after the returned promise resolves, so resolve only once the effects are
 * durable. Throwing retries the cast (up to `maxDeliveries`); an error with a string
 * `code` keeps that code in the dead-letter reason, and `retryable: false` dead-letters
 * at once.
 */
export type CastHandler<Req> = (request: Req, ctx: CastContext) => Promise<void>;

/** A method's codec and handler, by wire name. */
export interface Route {
  readonly entry: MethodEntry;
  readonly handler: CastHandler<unknown>;
}

/** Everything the delivery logic needs from its subscription. */
export interface DeliveryDeps {
  readonly service: ServiceEntry;
  readonly routes: ReadonlyMap<string, Route>;
  readonly topology: QueueTopology;
  /** A server pool's binding keys: a delivery under any other key is a stray (forwarded). Undefined for a plain queue. */
  readonly poolKeys: ReadonlySet<string> | undefined;
  /** A server pool's handlers for casts to servers nobody serves any more (instead of the DLQ). */
  readonly notServedRoutes?: ReadonlyMap<string, Route>;
  readonly publisher: Publisher;
  readonly logger: Logger;
  readonly retryBackoff: BackoffPolicy;
  readonly deadLetterTimeoutMs: number;
  /** Resolves after `ms`, or early when the subscription stops. */
  readonly pause: (ms: number) => Promise<void>;
}

type Checked = { readonly failure: FailureSummary } | { readonly route: Route; readonly request: unknown };

function fail(code: string, message: string): Checked {
  return { failure: { code, message, retryable: false } };
}

function check(deps: DeliveryDeps, msg: ConsumeMessage, attempt: number): Checked {
  const headers = msg.properties.headers ?? {};
  const method = headerString(headers, HEADER.method);
  const versionText = headerString(headers, HEADER.rpcVersion);
  const version = parseRpcVersion(versionText);
  if (!version) return fail(BUS_ERROR.messageInvalid, `cast has no valid ${HEADER.rpcVersion} header (got ${JSON.stringify(versionText)})`);
  if (!isCompatibleVersion(deps.service.version, version)) {
    return fail(
      BUS_ERROR.rpcVersionUnsupported,
      `cast ${method ?? '?'} has RPC version ${versionText}; ${deps.service.fullName} here handles ${deps.service.version.major}.x up to ${deps.service.rpcVersion}`,
    );
  }
  const route = method === undefined ? undefined : deps.routes.get(method);
  if (!route) return fail(BUS_ERROR.messageInvalid, `no handler for method ${JSON.stringify(method)} on queue ${deps.topology.queue}`);
  if (attempt > deps.topology.maxDeliveries) {
    return fail(
      BUS_ERROR.deliveryLimit,
      `delivered ${attempt} times, more than the limit of ${deps.topology.maxDeliveries} (the consumer kept failing before it could ack)`,
    );
  }
  try {
    return { route, request: route.entry.definition.requestDeserialize(msg.content) };
  } catch (err) {
    return fail(BUS_ERROR.messageUndecodable, `body is not a valid ${route.entry.key} request: ${String(err)}`);
  }
}

/** Acks, nacks, retries or dead-letters one delivery; never throws. */
export async function handleDelivery(deps: DeliveryDeps, channel: Channel, msg: ConsumeMessage): Promise<void> {
  const headers = msg.properties.headers ?? {};
  const attempt = deliveryAttempt(headers);
  if (deps.poolKeys !== undefined && !deps.poolKeys.has(msg.fields.routingKey)) {
    await forwardStray(deps, channel, msg, attempt);
    return;
  }
  const checked = check(deps, msg, attempt);
  if ('failure' in checked) {
    await deadLetter(deps, channel, msg, checked.failure, attempt);
    return;
  }
  await runHandler(deps, channel, msg, checked, attempt);
}

/** Runs one route's handler in a `process <topic>` span; acks when it resolves, else retries or dead-letters. */
async function runHandler(
  deps: DeliveryDeps,
  channel: Channel,
  msg: ConsumeMessage,
  { route, request }: { route: Route; request: unknown },
  attempt: number,
): Promise<void> {
  const headers = msg.properties.headers ?? {};
  const attrs = {
    exchange: msg.fields.exchange,
    routingKey: msg.fields.routingKey,
    bodySize: msg.content.length,
    messageId: typeof msg.properties.messageId === 'string' ? msg.properties.messageId : '',
    method: route.entry.wireName,
    attempt,
  };
  try {
    await withProcessSpan(deps.service.topic, attrs, headers, async (otelContext) => {
      const logger = deps.logger.child({
        rpc_method: route.entry.wireName,
        attempt,
        routing_key: msg.fields.routingKey,
        message_id: attrs.messageId,
        ...traceFields(otelContext),
      });
      const ctx: CastContext = {
        method: route.entry.wireName,
        rpcVersion: headerString(headers, HEADER.rpcVersion) ?? '',
        attempt,
        redelivered: msg.fields.redelivered || attempt > 1,
        routingKey: msg.fields.routingKey,
        server: serverOf(deps.service.topic, msg.fields.routingKey),
        messageId: msg.properties.messageId as string | undefined,
        headers,
        logger,
        otelContext,
      };
      await route.handler(request, ctx);
    });
  } catch (err) {
    await onHandlerFailure(deps, channel, msg, summarizeFailure(err), attempt);
    return;
  }
  settle(deps, channel, msg, 'ack');
}

function serverOf(topic: string, key: string): string | undefined {
  return key.startsWith(`${topic}.`) ? key.slice(topic.length + 1) : undefined;
}

/**
 * A server pool got a cast under a key it does not serve (an earlier run of its owner served
 * more servers). Unbinds the key, so no further cast comes here for it, then republishes
 * the cast with its routing key (confirmed): it goes to the queue serving that server now,
 * or, if none is bound, to the pool's `notServed` handler (see {@link notServed}). Acked
 * only after either is done; requeued otherwise.
 */
async function forwardStray(deps: DeliveryDeps, channel: Channel, msg: ConsumeMessage, attempt: number): Promise<void> {
  const { topology, logger } = deps;
  const key = msg.fields.routingKey;
  const fields = {
    rpc_method: headerString(msg.properties.headers, HEADER.method),
    routing_key: key,
    queue: topology.queue,
    message_id: msg.properties.messageId as unknown,
  };
  try {
    await channel.unbindQueue(topology.queue, topology.exchange, key);
  } catch (err) {
    // NOTE: the channel is gone with this error; the broker redelivers the cast and we try again.
    logger.warn({ ...fields, err: String(err) }, 'cannot unbind a key this pool no longer serves');
    return;
  }
  const headers: Record<string, unknown> = { ...msg.properties.headers, [HEADER.forwardedFrom]: topology.queue };
  delete headers[HEADER.deliveryCount];
  try {
    await deps.publisher.publish(
      { exchange: topology.exchange, routingKey: key, content: msg.content, properties: republished(msg, headers) },
      Date.now() + deps.deadLetterTimeoutMs,
    );
  } catch (err) {
    if (err instanceof BusError && err.code === BUS_ERROR.publishUnroutable) {
      await notServed(deps, channel, msg, attempt);
      return;
    }
    logger.error({ ...fields, err: String(err) }, 'forwarding a stray cast failed, requeueing it');
    await deps.pause(backoffDelay(deps.retryBackoff, attempt));
    settle(deps, channel, msg, 'requeue');
    return;
  }
  logger.warn(fields, 'cast for a server this pool no longer serves: key unbound, cast forwarded');
  settle(deps, channel, msg, 'ack');
}

/**
 * A stray cast no queue serves any more: handed to the service's `notServed` handler for its
 * method (which reports the server's failure for that request, so the request moves on), or,
 * without one, dead-lettered with `bus.server.not_served`.
 */
async function notServed(deps: DeliveryDeps, channel: Channel, msg: ConsumeMessage, attempt: number): Promise<void> {
  const key = msg.fields.routingKey;
  const failure = {
    code: BUS_ERROR.serverNotServed,
    retryable: false,
    message: `${key} is no longer served by queue ${deps.topology.queue}, and no other queue is bound to it`,
  };
  const checked = deps.notServedRoutes === undefined ? undefined : check({ ...deps, routes: deps.notServedRoutes }, msg, attempt);
  if (checked === undefined || 'failure' in checked) {
    await deadLetter(deps, channel, msg, checked?.failure ?? failure, attempt);
    return;
  }
  deps.logger.warn(
    { rpc_method: checked.route.entry.wireName, routing_key: key, queue: deps.topology.queue },
    'cast for a server nobody serves: reported as its failure',
  );
  await runHandler(deps, channel, msg, checked, attempt);
}

/** Properties of a copy of `msg` published by the consumer (dead letter, forward). */
function republished(msg: ConsumeMessage, headers: Record<string, unknown>): Options.Publish & { messageId: string } {
  // NOTE: never copy userId: the broker checks it against the publishing user.
  const { messageId, contentType, type, appId, timestamp, correlationId } = msg.properties;
  return {
    messageId: typeof messageId === 'string' ? messageId : randomUUID(),
    persistent: true,
    headers,
    contentType: str(contentType),
    type: str(type),
    appId: str(appId),
    correlationId: str(correlationId),
    timestamp: typeof timestamp === 'number' ? timestamp : undefined,
  };
}

async function onHandlerFailure(
  deps: DeliveryDeps,
  channel: Channel,
  msg: ConsumeMessage,
  failure: FailureSummary,
  attempt: number,
): Promise<void> {
  const fields = { rpc_method: headerString(msg.properties.headers, HEADER.method), attempt, code: failure.code, err: failure.message };
  if (!failure.retryable || attempt >= deps.topology.maxDeliveries) {
    await deadLetter(deps, channel, msg, failure, attempt);
    return;
  }
  deps.logger.warn(fields, 'cast handler failed, will be redelivered');
  await deps.pause(backoffDelay(deps.retryBackoff, attempt));
  settle(deps, channel, msg, 'requeue');
}

/**
 * Publishes the message with its reason to `<queue>.dlq` (confirmed), then acks the
 * original. If the dead-letter publish fails the original is requeued, never acked.
 */
async function deadLetter(
  deps: DeliveryDeps,
  channel: Channel,
  msg: ConsumeMessage,
  failure: FailureSummary,
  attempt: number,
): Promise<void> {
  const { topology, logger } = deps;
  const headers: Record<string, unknown> = {
    ...msg.properties.headers,
    [HEADER.dlqCode]: failure.code,
    [HEADER.dlqMessage]: failure.message.slice(0, 4000),
    [HEADER.dlqAttempts]: attempt,
    [HEADER.dlqExchange]: msg.fields.exchange,
    [HEADER.dlqRoutingKey]: msg.fields.routingKey,
    [HEADER.dlqQueue]: topology.queue,
    [HEADER.dlqAt]: new Date().toISOString(),
  };
  delete headers[HEADER.deliveryCount];
  const properties = republished(msg, headers);
  const fields = {
    rpc_method: headerString(msg.properties.headers, HEADER.method),
    attempt,
    code: failure.code,
    err: failure.message,
    queue: topology.deadLetterQueue,
  };
  try {
    await deps.publisher.publish(
      { exchange: topology.deadLetterExchange, routingKey: topology.queue, content: msg.content, properties },
      Date.now() + deps.deadLetterTimeoutMs,
    );
  } catch (err) {
    logger.error({ ...fields, dlq_err: String(err) }, 'dead-letter publish failed, requeueing the original');
    await deps.pause(backoffDelay(deps.retryBackoff, attempt));
    settle(deps, channel, msg, 'requeue');
    return;
  }
  logger.warn(fields, 'cast dead-lettered');
  settle(deps, channel, msg, 'ack');
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function settle(deps: DeliveryDeps, channel: Channel, msg: ConsumeMessage, how: 'ack' | 'requeue'): void {
  try {
    if (how === 'ack') channel.ack(msg);
    else channel.nack(msg, false, true);
  } catch (err) {
    // NOTE: the channel died with the connection; the broker redelivers the message.
    deps.logger.warn({ err: String(err), how, message_id: msg.properties.messageId }, 'cannot settle delivery, it will be redelivered');
  }
}
