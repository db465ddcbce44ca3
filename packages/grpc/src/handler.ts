import { Metadata, type ServerUnaryCall, type sendUnaryData, status } from '@grpc/grpc-js';
import { trace } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { isConnectionError } from '@cellsched/connection-error';
import { FAILURE_CODES, type Failure } from '@cellsched/wire';
import { FailureError, isFailureError, makeFailure } from './failure-error';
import { failureTrailers } from './failure-metadata';
import { REQUEST_ID_METADATA_KEY, newRequestId, runWithRequestContext } from './request-context';
import { statusForFailure } from './status-map';
import type { RequestOf, ResponseOf, UnaryMethodKeys } from './types';

/** What a handler knows about the call besides its request. */
export interface CallContext {
  /** Full method path, e.g. `/cellsched.v1.EchoService/Echo`. */
  method: string;
  /** From the caller's `x-request-id` metadata, or a fresh `req-<uuid>`. */
  requestId: string;
  metadata: Metadata;
  /** The caller's deadline, if it sent one. */
  deadline: Date | undefined;
  /** Aborted when the caller cancels or its deadline passes. */
  signal: AbortSignal;
  /** The server logger with `request_id` and `rpc_method` bound. */
  logger: Logger;
}

/** A promise-based unary handler. Throw a {@link FailureError} for an expected outcome. */
export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

/** Promise-based handlers for every unary method of a ts-proto service definition. */
export type ServiceHandlers<S> = {
  [K in UnaryMethodKeys<S>]: UnaryHandler<RequestOf<S[K]>, ResponseOf<S[K]>>;
};

/** Code of the generic Failure sent for any error that is not a FailureError. */
export const INTERNAL_FAILURE_CODE = FAILURE_CODES.grpc.internal;
/** Code of the Failure sent when the handler lost its database or a socket (the same call may succeed later). */
export const UNAVAILABLE_FAILURE_CODE = FAILURE_CODES.grpc.dependencyUnavailable;

function deadlineOf(call: ServerUnaryCall<unknown, unknown>): Date | undefined {
  const d = call.getDeadline();
  if (d instanceof Date) return d;
  return Number.isFinite(d) ? new Date(d) : undefined;
}

function requestIdOf(md: Metadata): string {
  const given = md.get(REQUEST_ID_METADATA_KEY)[0];
  return typeof given === 'string' && given.length > 0 && given.length <= 128 ? given : newRequestId();
}

/**
 * The Failure and status a handler's thrown value answers with (logged at the level it
 * deserves): a FailureError's own; a lost database connection or socket, a retryable
 * `grpc.dependency_unavailable` (UNAVAILABLE); anything else a generic `grpc.internal`
 * (INTERNAL). Also for handlers that answer several results in one response, each with its
 * own Failure (placement's ClaimMany).
 */
export function failureForError(err: unknown, logger: Logger): { failure: Failure; code: status } {
  let failure: Failure;
  let code: status;
  if (isFailureError(err)) {
    failure = err.failure;
    code = err.status ?? statusForFailure(failure);
    // NOTE: STYLE's levels: warn for expected failures, error for unexpected ones.
    if (failure.expected) logger.warn({ failure_code: failure.code, grpc_status: code }, 'rpc failed');
    else logger.error({ err, failure_code: failure.code, grpc_status: code }, 'rpc failed unexpectedly');
  } else if (isConnectionError(err)) {
    // a database restart or a network cut: retryable, so a caller's retry (a redelivered cast) succeeds once it is back
    failure = makeFailure(UNAVAILABLE_FAILURE_CODE, 'a backing service (database or network) is unavailable', {
      expected: false,
      retryable: true,
    });
    code = status.UNAVAILABLE;
    logger.warn({ err: String(err) }, 'rpc failed: backing service unavailable');
  } else {
    failure = makeFailure(INTERNAL_FAILURE_CODE, 'internal error', { expected: false, retryable: false });
    code = status.INTERNAL;
    logger.error({ err }, 'rpc handler raised an unexpected error');
  }
  return { failure, code };
}

/** Maps a thrown value to the status, Failure and trailers sent to the client; logs it. */
function reply(err: unknown, logger: Logger): { code: status; details: string; metadata: Metadata } {
  const { failure, code } = failureForError(err, logger);
  return { code, details: `${failure.code}: ${failure.message}`, metadata: failureTrailers(failure) };
}

/**
 * Adapts a promise-based handler to grpc-js. The handler runs with the request id (and the
 * caller's deadline) as the current request context, so client calls it makes carry both on.
 * A {@link FailureError} becomes its status with the Failure in trailers; a lost database
 * connection or socket becomes UNAVAILABLE with a retryable `grpc.dependency_unavailable`
 * Failure; any other error becomes INTERNAL with a generic `grpc.internal` Failure and is
 * logged with its stack.
 */
export function wrapUnary<Req, Res>(method: string, handler: UnaryHandler<Req, Res>, logger: Logger) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    const requestId = requestIdOf(call.metadata);
    const deadline = deadlineOf(call as ServerUnaryCall<unknown, unknown>);
    const abort = new AbortController();
    let answered = false;
    // NOTE: grpc-js also emits 'cancelled' when a call closes after its answer; only an
    // unanswered call is really cancelled.
    call.on('cancelled', () => {
      if (!answered) abort.abort(new FailureError(makeFailure(FAILURE_CODES.grpc.cancelled, 'call cancelled by the client')));
    });
    // NOTE: the call's logger is made when first used: most calls log nothing.
    let log: Logger | undefined;
    const callLogger = (): Logger => (log ??= logger.child({ request_id: requestId, rpc_method: method }));
    trace.getActiveSpan()?.setAttribute('cellsched.request_id', requestId);
    // NOTE: the request id echo goes out with the answer's headers, not ahead of them: sent
    // first, the headers were a socket write (and a read and wake-up at the caller) of their own.
    const answer = (): void => {
      answered = true;
      const echo = new Metadata();
      echo.set(REQUEST_ID_METADATA_KEY, requestId);
      call.sendMetadata(echo);
    };
    const ctx: CallContext = {
      method,
      requestId,
      metadata: call.metadata,
      deadline,
      signal: abort.signal,
      get logger() {
        return callLogger();
      },
    };
    const ctxStore = deadline ? { requestId, deadline } : { requestId };
    runWithRequestContext(ctxStore, () => handler(call.request, ctx)).then(
      (response) => {
        answer();
        callback(null, response);
      },
      (err: unknown) => {
        answer();
        callback(reply(err, callLogger()));
      },
    );
  };
}
