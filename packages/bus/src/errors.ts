/**
 * Error codes of the bus. Callers branch on `code`, never on the message text; codes are
 * never changed once published (shared/STYLE.md).
 */
export const BUS_ERROR = {
  /** The bus was closed; nothing further is sent or consumed. Not retryable on this bus. */
  closed: 'bus.closed',
  /** No broker connection within the deadline (broker down, network). Retryable. */
  unavailable: 'bus.connection.unavailable',
  /** The broker refused the credentials or the vhost. Not retryable without new config. */
  accessRefused: 'bus.connection.access_refused',
  /** Bad argument to a bus call (server name, method, options). Nothing was sent. */
  invalidArgument: 'bus.invalid_argument',
  /** The broker did not confirm within the deadline: the cast may or may not be queued. Retryable (at-least-once). */
  publishTimeout: 'bus.publish.timeout',
  /** The broker refused the message (nack). It is not queued. Retryable. */
  publishNacked: 'bus.publish.nacked',
  /** No queue is bound to the routing key, so the broker dropped the message. Not queued. */
  publishUnroutable: 'bus.publish.unroutable',
  /** The broker refused the publish (permissions: no write access to the exchange). */
  publishRefused: 'bus.publish.access_refused',
  /** The cast's RPC major version is unknown to the receiver, or its minor is newer. */
  rpcVersionUnsupported: 'bus.rpc_version.unsupported',
  /** The message lacks the method / version headers or names a method nobody serves. */
  messageInvalid: 'bus.message.invalid',
  /** The body is not a valid protobuf of the method's request type. */
  messageUndecodable: 'bus.message.undecodable',
  /** The message was delivered more times than allowed (the consumer kept dying). */
  deliveryLimit: 'bus.delivery.limit_exceeded',
  /** A handler threw something without a `code`. */
  handlerFailed: 'bus.handler.failed',
  /** A server pool's queue is consumed by another connection (another process with the same pool name). Retryable: the owner may be dying. */
  queueLocked: 'bus.queue.locked',
  /** A cast reached a server pool under a key it no longer serves, and no other queue is bound to that key now. */
  serverNotServed: 'bus.server.not_served',
} as const;

export type BusErrorCode = (typeof BUS_ERROR)[keyof typeof BUS_ERROR];

/** An error raised by the bus itself; `retryable` says whether the same call may succeed later. */
export class BusError extends Error {
  override readonly name = 'BusError';
  constructor(
    readonly code: BusErrorCode,
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The code, message and retryable flag of any thrown value, as recorded in dead-letter headers. */
export interface FailureSummary {
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
}

/**
 * Summarises what a handler threw. An error carrying a string `code` (a `Failure`-shaped
 * error, or a BusError) keeps its code; `retryable: false` on it stops redelivery at once.
 * Anything else is `bus.handler.failed` and retryable.
 */
export function summarizeFailure(err: unknown): FailureSummary {
  if (err instanceof Error) {
    const fields = err as Error & { code?: unknown; retryable?: unknown };
    const code = typeof fields.code === 'string' && fields.code !== '' ? fields.code : BUS_ERROR.handlerFailed;
    return { code, message: err.message, retryable: fields.retryable !== false };
  }
  return { code: BUS_ERROR.handlerFailed, message: String(err), retryable: true };
}

/** The URL with its password removed, for logs and error messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<invalid url>';
  }
}
