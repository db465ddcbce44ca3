import { randomUUID } from 'node:crypto';
import { SpanStatusCode } from '@opentelemetry/api';
import { methodByKey, routingKey, type CastServiceDefinition, type RequestOf, type ServiceEntry } from './definitions';
import { BUS_ERROR, BusError } from './errors';
import { HEADER } from './headers';
import type { Publisher } from './publisher';
import { markFailed, startSendSpan } from './tracing';

/** Per-cast options. */
export interface CastOptions {
  /** Target server: routes to `<topic>.<server>` (`compute.host-12`); omit for `<topic>`. */
  readonly server?: string;
  /** Overall deadline, reconnection wait included. Default: the bus's `castTimeoutMs`. */
  readonly timeoutMs?: number;
}

/** What the broker confirmed. */
export interface CastReceipt {
  readonly messageId: string;
  readonly routingKey: string;
}

/**
 * Sends the casts of one generated service, typed by its proto request messages.
 * `cast` resolves only after the broker's publisher confirm (the message is stored in a
 * quorum queue). On rejection the cast may still have been queued once when the error is
 * `bus.publish.timeout`; retrying is safe because handlers are idempotent.
 */
export class CastClient<S extends CastServiceDefinition> {
  constructor(
    private readonly service: ServiceEntry,
    private readonly publisher: Publisher,
    private readonly exchange: string,
    private readonly defaultTimeoutMs: number,
  ) {}

  /** Topic and RPC version stamped on this client's casts. */
  get info(): { readonly topic: string; readonly rpcVersion: string } {
    return { topic: this.service.topic, rpcVersion: this.service.rpcVersion };
  }

  /**
   * Publishes `request` to `<topic>[.<server>]` with a publisher confirm. Errors:
   * `bus.invalid_argument` (nothing sent), `bus.publish.unroutable` (no such queue: nothing
   * queued), `bus.connection.unavailable` / `bus.publish.timeout` (retryable),
   * `bus.publish.nacked`, `bus.publish.access_refused`, `bus.closed`.
   */
  async cast<K extends keyof S & string>(method: K, request: RequestOf<S[K]>, options: CastOptions = {}): Promise<CastReceipt> {
    const entry = methodByKey(this.service, method);
    const key = routingKey(this.service.topic, options.server);
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    if (!(timeoutMs > 0)) throw new BusError(BUS_ERROR.invalidArgument, `timeoutMs must be > 0 (got ${timeoutMs})`, false);
    const content = entry.definition.requestSerialize(request as never);
    const messageId = randomUUID();
    const headers: Record<string, unknown> = {
      [HEADER.method]: entry.wireName,
      [HEADER.rpcVersion]: this.service.rpcVersion,
      [HEADER.service]: this.service.fullName,
    };
    const span = startSendSpan(
      this.service.topic,
      { exchange: this.exchange, routingKey: key, messageId, bodySize: content.length, method: entry.wireName },
      headers,
    );
    try {
      await this.publisher.publish(
        {
          exchange: this.exchange,
          routingKey: key,
          content,
          properties: {
            messageId,
            persistent: true,
            headers,
            timestamp: Math.floor(Date.now() / 1000),
            contentType: 'application/x-protobuf',
            type: entry.definition.path,
          },
        },
        Date.now() + timeoutMs,
      );
      span.setStatus({ code: SpanStatusCode.OK });
      return { messageId, routingKey: key };
    } catch (err) {
      markFailed(span, err);
      throw err;
    } finally {
      span.end();
    }
  }
}
