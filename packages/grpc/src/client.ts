import {
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientOptions,
  connectivityState,
  Metadata,
  type ServiceError,
  credentials,
  status,
} from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { type FailureError, isFailureError } from './failure-error';
import { failureErrorFromServiceError } from './failure-metadata';
import { REQUEST_ID_METADATA_KEY, currentRequestContext, newRequestId } from './request-context';
import { type MethodDefinitionLike, type RequestOf, type ResponseOf, type UnaryMethodKeys, unaryMethods } from './types';

/** A ts-proto client constructor, e.g. `EchoServiceClient` (it carries its definition as `service`). */
export interface GrpcClientConstructor<S> {
  new (address: string, creds: ChannelCredentials, options?: Partial<ClientOptions>): Client;
  service: S;
}

/** Options of {@link createGrpcClient}. */
export interface GrpcClientOptions<S> {
  /** Replica addresses (`host:port`); calls spread over them round-robin. At least one. */
  addresses: readonly string[];
  /** Deadline of each attempt, in ms. Default 5000. Never later than an inbound call's deadline. */
  deadlineMs?: number;
  /** Attempts per call, over all replicas (bounded retry). Default 3. */
  maxAttempts?: number;
  /** First backoff between attempts in ms, doubled each time, with jitter. Default 50. */
  backoffInitialMs?: number;
  /** Backoff ceiling in ms. Default 1000. */
  backoffMaxMs?: number;
  /** Methods safe to run twice: only these are retried (others can be marked per call). */
  idempotent?: readonly UnaryMethodKeys<S>[];
  logger?: Logger;
  channelOptions?: ChannelOptions;
}

/** Per-call options. */
export interface UnaryCallOptions {
  /** Overrides the client's per-attempt deadline. */
  deadlineMs?: number;
  /** Overrides whether this call may be retried on another replica. */
  idempotent?: boolean;
  /** Also retry on DEADLINE_EXCEEDED (only for idempotent calls). Default false. */
  retryOnDeadlineExceeded?: boolean;
  /** Request id to send; default: the current request context's, else a fresh one. */
  requestId?: string;
  /** Extra ASCII metadata. */
  metadata?: Record<string, string>;
  /** Cancels the call (CANCELLED, `grpc.cancelled`, never retried); the server's `ctx.signal` fires. */
  signal?: AbortSignal;
}

/** Promise-returning methods for every unary method of the service. */
export type PromiseClient<S> = {
  readonly [K in UnaryMethodKeys<S>]: (request: RequestOf<S[K]>, options?: UnaryCallOptions) => Promise<ResponseOf<S[K]>>;
};

/** A client over several replicas. `close()` releases every channel. */
export type GrpcClient<S> = PromiseClient<S> & { close(): void };

interface Settings {
  deadlineMs: number;
  maxAttempts: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  logger: Logger | undefined;
}

interface Replica {
  address: string;
  client: Client;
}

function attemptOnce<Req, Res>(
  replica: Replica,
  method: MethodDefinitionLike<Req, Res>,
  request: Req,
  md: Metadata,
  deadline: Date,
  signal: AbortSignal | undefined,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const cancel = () => call.cancel();
    const call = replica.client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      request,
      md,
      { deadline },
      (err: ServiceError | null, value?: Res) => {
        signal?.removeEventListener('abort', cancel);
        if (err) reject(err);
        else resolve(value as Res);
      },
    );
    if (signal?.aborted) cancel();
    else signal?.addEventListener('abort', cancel, { once: true });
  });
}

/** Replicas in the order to try: round-robin start, channels known to be failing last. */
function replicaOrder(replicas: readonly Replica[], start: number): Replica[] {
  const rotated = replicas.map((_, i) => replicas[(start + i) % replicas.length] as Replica);
  const failing = (r: Replica) => r.client.getChannel().getConnectivityState(false) === connectivityState.TRANSIENT_FAILURE;
  return [...rotated.filter((r) => !failing(r)), ...rotated.filter(failing)];
}

function shouldRetry(err: FailureError, idempotent: boolean, onDeadline: boolean, parentDeadline: Date | undefined): boolean {
  if (!idempotent) return false;
  if (parentDeadline && Date.now() >= parentDeadline.getTime()) return false;
  return err.status === status.UNAVAILABLE || (onDeadline && err.status === status.DEADLINE_EXCEEDED);
}

function backoff(settings: Settings, attempt: number): Promise<void> {
  const base = Math.min(settings.backoffMaxMs, settings.backoffInitialMs * 2 ** (attempt - 1));
  return new Promise((resolve) => setTimeout(resolve, base * (0.5 + Math.random() / 2)));
}

function metadataFor(options: UnaryCallOptions): Metadata {
  const md = new Metadata();
  for (const [k, v] of Object.entries(options.metadata ?? {})) md.set(k, v);
  md.set(REQUEST_ID_METADATA_KEY, options.requestId ?? currentRequestContext()?.requestId ?? newRequestId());
  return md;
}

function deadlineFor(ms: number, parent: Date | undefined): Date {
  const own = Date.now() + ms;
  return new Date(parent ? Math.min(own, parent.getTime()) : own);
}

async function callWithRetry<Req, Res>(
  replicas: readonly Replica[],
  start: number,
  method: MethodDefinitionLike<Req, Res>,
  request: Req,
  options: UnaryCallOptions,
  idempotent: boolean,
  settings: Settings,
): Promise<Res> {
  const order = replicaOrder(replicas, start);
  const md = metadataFor(options);
  const parentDeadline = currentRequestContext()?.deadline;
  for (let attempt = 1; ; attempt++) {
    const replica = order[(attempt - 1) % order.length] as Replica;
    try {
      const deadline = deadlineFor(options.deadlineMs ?? settings.deadlineMs, parentDeadline);
      return await attemptOnce(replica, method, request, md, deadline, options.signal);
    } catch (raw) {
      const origin = { address: replica.address, method: method.path, attempts: attempt };
      const err = isFailureError(raw) ? raw : failureErrorFromServiceError(raw as ServiceError, origin);
      const retry =
        attempt < settings.maxAttempts &&
        !options.signal?.aborted &&
        shouldRetry(err, idempotent, options.retryOnDeadlineExceeded ?? false, parentDeadline);
      const fields = {
        rpc_method: method.path,
        attempt,
        address: replica.address,
        failure_code: err.code,
        request_id: md.get(REQUEST_ID_METADATA_KEY)[0],
      };
      settings.logger?.[retry ? 'warn' : 'debug'](fields, retry ? 'rpc attempt failed, retrying on another replica' : 'rpc failed');
      if (!retry) throw err;
      await backoff(settings, attempt);
    }
  }
}

/** Every problem with `options`, empty when they are valid. */
export function clientOptionProblems(options: GrpcClientOptions<unknown>): string[] {
  const problems: string[] = [];
  if (options.addresses.length === 0) problems.push('addresses: at least one replica address is required');
  for (const a of options.addresses) if (!/^[^\s/]+:\d{1,5}$/.test(a)) problems.push(`addresses: '${a}' is not host:port`);
  if (options.deadlineMs !== undefined && !(options.deadlineMs > 0)) problems.push(`deadlineMs must be > 0 (got ${options.deadlineMs})`);
  if (options.maxAttempts !== undefined && !(Number.isInteger(options.maxAttempts) && options.maxAttempts >= 1)) {
    problems.push(`maxAttempts must be an integer >= 1 (got ${options.maxAttempts})`);
  }
  for (const key of ['backoffInitialMs', 'backoffMaxMs'] as const) {
    const v = options[key];
    if (v !== undefined && !(v >= 0)) problems.push(`${key} must be >= 0 (got ${v})`);
  }
  return problems;
}

/**
 * A promise-based client for a ts-proto service over several replicas. Every attempt has a
 * deadline. Idempotent calls are retried on the next replica after UNAVAILABLE (and after
 * DEADLINE_EXCEEDED when the call asks), with bounded attempts and jittered exponential
 * backoff; other calls are never retried here. Every failure rejects with a FailureError:
 * the server's Failure decoded from the trailers, or a synthesized `grpc.<status>` one.
 * Throws (before connecting anything) when the options are invalid, listing every problem.
 */
export function createGrpcClient<S extends object>(ctor: GrpcClientConstructor<S>, options: GrpcClientOptions<S>): GrpcClient<S> {
  const problems = clientOptionProblems(options as GrpcClientOptions<unknown>);
  if (problems.length > 0) throw new Error(`invalid grpc client options: ${problems.join('; ')}`);
  const settings: Settings = {
    deadlineMs: options.deadlineMs ?? 5000,
    maxAttempts: options.maxAttempts ?? 3,
    backoffInitialMs: options.backoffInitialMs ?? 50,
    backoffMaxMs: options.backoffMaxMs ?? 1000,
    logger: options.logger,
  };
  const replicas = options.addresses.map((address) => ({
    address,
    client: new ctor(address, credentials.createInsecure(), options.channelOptions),
  }));
  const idempotent = new Set<string>(options.idempotent ?? []);
  let next = 0;
  const out: Record<string, unknown> = {
    close: () => replicas.forEach((r) => r.client.close()),
  };
  for (const [key, method] of unaryMethods(ctor.service)) {
    out[key] = async (request: unknown, callOptions: UnaryCallOptions = {}) => {
      if (callOptions.deadlineMs !== undefined && !(callOptions.deadlineMs > 0)) {
        throw new Error(`${method.path}: deadlineMs must be > 0 (got ${callOptions.deadlineMs})`);
      }
      return callWithRetry(
        replicas,
        next++ % replicas.length,
        method,
        request,
        callOptions,
        callOptions.idempotent ?? idempotent.has(key),
        settings,
      );
    };
  }
  return out as GrpcClient<S>;
}
