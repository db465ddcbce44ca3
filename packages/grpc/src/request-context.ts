import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { context, propagation } from '@opentelemetry/api';

/** gRPC metadata key for the request id, Nova's `req-<uuid>`. */
export const REQUEST_ID_METADATA_KEY = 'x-request-id';

/**
 * W3C baggage entry that also carries the request id. With telemetry started, OTel
 * propagates baggage in gRPC metadata and in the bus's AMQP headers, so a cast consumer
 * (and the calls it makes) sees the request id of the call that sent the cast.
 */
export const REQUEST_ID_BAGGAGE_KEY = 'cellsched.request_id';

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

/**
 * Runs `fn` with `ctx` as the current request context: client calls inside reuse its request
 * id, and the id goes into the OTel baggage of the active context too.
 */
export function runWithRequestContext<T>(ctx: RequestContext, fn: () => T): T {
  const baggage = (propagation.getActiveBaggage() ?? propagation.createBaggage()).setEntry(REQUEST_ID_BAGGAGE_KEY, {
    value: ctx.requestId,
  });
  return context.with(propagation.setBaggage(context.active(), baggage), () => storage.run(ctx, fn));
}

/**
 * The current request context: the one set by {@link runWithRequestContext} (every gRPC
 * handler runs in one), else a request id found in the active OTel baggage (a cast consumer
 * of a traced process), else undefined.
 */
export function currentRequestContext(): RequestContext | undefined {
  const own = storage.getStore();
  if (own) return own;
  const fromBaggage = propagation.getActiveBaggage()?.getEntry(REQUEST_ID_BAGGAGE_KEY)?.value;
  return fromBaggage ? { requestId: fromBaggage } : undefined;
}
