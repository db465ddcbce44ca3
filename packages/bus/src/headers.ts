/**
 * The AMQP headers of a cast. Names are lowercase and prefixed `cellsched-` (RabbitMQ
 * reserves `x-`); trace context uses the W3C names `traceparent` / `tracestate`.
 */
export const HEADER = {
  /** Method in Nova's snake_case: `build_and_run_instance`. */
  method: 'cellsched-method',
  /** RPC version of the sender's service, "major.minor". */
  rpcVersion: 'cellsched-rpc-version',
  /** Full proto service name: `cellsched.v1.ComputeService`. */
  service: 'cellsched-service',
  /** Set by quorum queues on redelivery: number of earlier deliveries. */
  deliveryCount: 'x-delivery-count',
  /** Dead-letter reason: error code (`bus.rpc_version.unsupported`, a handler's Failure code). */
  dlqCode: 'cellsched-dlq-code',
  /** Dead-letter reason: human-readable message. */
  dlqMessage: 'cellsched-dlq-message',
  /** Dead-letter reason: how many deliveries were tried. */
  dlqAttempts: 'cellsched-dlq-attempts',
  /** Exchange and routing key the cast was originally published with. */
  dlqExchange: 'cellsched-dlq-exchange',
  dlqRoutingKey: 'cellsched-dlq-routing-key',
  /** Queue it was consumed from, and when (ISO 8601) it was dead-lettered. */
  dlqQueue: 'cellsched-dlq-queue',
  dlqAt: 'cellsched-dlq-at',
  /** Set when a server pool forwarded a cast it no longer serves: the pool queue it came from. */
  forwardedFrom: 'cellsched-forwarded-from',
} as const;

/** `BuildAndRunInstance` / `buildAndRunInstance` -> `build_and_run_instance` (Nova's method names). */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** A parsed "major.minor" RPC version. */
export interface RpcVersion {
  readonly major: number;
  readonly minor: number;
}

/** Parses "major.minor"; undefined for anything else. */
export function parseRpcVersion(text: unknown): RpcVersion | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^(\d{1,6})\.(\d{1,6})$/.exec(text);
  if (!match?.[1] || !match[2]) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]) };
}

/**
 * Nova's rule (oslo.messaging `version_is_compatible`): a server at `mine` handles a cast
 * at `theirs` when the majors are equal and the cast's minor is not newer than ours.
 */
export function isCompatibleVersion(mine: RpcVersion, theirs: RpcVersion): boolean {
  return mine.major === theirs.major && theirs.minor <= mine.minor;
}

/** A header value as a string (AMQP may hand back Buffers for long strings). */
export function headerString(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = headers?.[name];
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

/** 1-based delivery attempt from the quorum queue's `x-delivery-count` (absent on the first). */
export function deliveryAttempt(headers: Record<string, unknown> | undefined): number {
  const raw = headers?.[HEADER.deliveryCount];
  const count = typeof raw === 'number' ? raw : typeof raw === 'bigint' ? Number(raw) : 0;
  return Number.isFinite(count) && count > 0 ? count + 1 : 1;
}
