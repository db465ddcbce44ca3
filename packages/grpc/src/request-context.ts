import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** gRPC metadata key (and AMQP header name) for the request id, Nova's `req-<uuid>`. */
export const REQUEST_ID_METADATA_KEY = 'x-request-id';

/** What an inbound request hands down to the calls it makes. */
export interface RequestContext {
  requestId: string;
  /** The inbound call's deadline, if any; outbound calls never outlive it. */
  deadline?: Date;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** A fresh request id in Nova's format: `req-` followed by a UUID. */
export function newRequestId(): string {
  return `req-${randomUUID()}`;
}

/** Runs `fn` with `ctx` as the current request context (client calls inside reuse its request id). */
export function runWithRequestContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** The current request context, or undefined outside any request. */
export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}
