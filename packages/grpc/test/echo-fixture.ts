import { createServer } from 'node:net';
import pino from 'pino';
import { EchoServiceService, type EchoRequest, type EchoResponse } from '@cellsched/wire';
import { type CallContext, FailureError, GrpcStatus, type RunningGrpcServer, bindService, startGrpcServer } from '@cellsched/grpc';

/** Failure metadata and diagnosis the echo server attaches, so tests can check they arrive intact. */
export const ECHO_DIAGNOSIS = [
  { filter: 'ComputeFilter', hostsBefore: 5, hostsAfter: 3, reason: '2 hosts disabled' },
  { filter: 'RamFilter', hostsBefore: 3, hostsAfter: 0, reason: 'not enough RAM' },
];

export const silentLogger = pino({ level: 'silent' });

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(new Error('aborted'));
      },
      { once: true },
    );
  });
}

/** What an echo server saw: one entry per call. */
export interface Seen {
  text: string;
  requestId: string;
  /** Set when the handler's signal fired (the caller cancelled or gave up). */
  aborted?: boolean;
}

async function echo(replica: string, seen: Seen[], req: EchoRequest, ctx: CallContext): Promise<EchoResponse> {
  const entry: Seen = { text: req.text, requestId: ctx.requestId };
  seen.push(entry);
  ctx.signal.addEventListener(
    'abort',
    () => {
      entry.aborted = true;
    },
    { once: true },
  );
  if (req.delayMs > 0) await sleep(req.delayMs, ctx.signal);
  if (req.failWithCode === 'echo.crash') throw new Error('boom: a bug in the handler');
  if (req.failWithCode === 'echo.db_restart') {
    // what pg throws when PostgreSQL is restarted under a query
    throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' });
  }
  if (req.failWithCode === 'echo.socket') throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  if (req.failWithCode === 'echo.explicit_status') {
    throw FailureError.of(req.failWithCode, 'explicit', { status: GrpcStatus.RESOURCE_EXHAUSTED, retryable: true });
  }
  if (req.failWithCode) {
    throw FailureError.of(req.failWithCode, `echo failed with ${req.failWithCode}`, {
      retryable: true,
      expected: true,
      metadata: { text: req.text, replica },
      diagnosis: ECHO_DIAGNOSIS,
    });
  }
  return { text: req.text, replica };
}

/** An EchoService replica on 127.0.0.1 with a free port. */
export async function startEcho(replica: string, seen: Seen[] = [], logger = silentLogger): Promise<RunningGrpcServer & { seen: Seen[] }> {
  const server = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    services: [
      bindService(EchoServiceService, {
        echo: (req, ctx) => echo(replica, seen, req, ctx),
        echoCast: () => Promise.resolve({}),
      }),
    ],
  });
  return Object.assign(server, { seen });
}

/** A 127.0.0.1 port that nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const address = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
