/**
 * How every service's `main.ts` ends: on SIGTERM or SIGINT close what the service opened,
 * then flush telemetry (last, so the closing spans and logs are exported) and exit.
 */
import type { Logger } from './logger';
import { shutdownTelemetry } from './start-telemetry';

/** The parts of `process` the lifecycle uses (a fake in tests). */
export interface SignalTarget {
  once(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  exit(code: number): never | void;
}

export interface StopOnSignalOptions {
  readonly target?: SignalTarget;
  readonly shutdown?: () => Promise<void>;
}

/**
 * Runs `close` once, on the first SIGTERM or SIGINT, then shuts telemetry down and exits
 * 0 — or 1 when `close` threw (logged with its stack; telemetry is still flushed).
 * A second signal while stopping is ignored.
 */
export function stopOnSignal(log: Logger, close: () => Promise<void>, opts: StopOnSignalOptions = {}): void {
  const target = opts.target ?? process;
  const shutdown = opts.shutdown ?? shutdownTelemetry;
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    let code = 0;
    try {
      await close();
    } catch (err) {
      log.error({ err }, 'stop failed');
      code = 1;
    }
    await shutdown().catch((err: unknown) => log.error({ err }, 'telemetry shutdown failed'));
    target.exit(code);
  };
  target.once('SIGTERM', () => void stop('SIGTERM'));
  target.once('SIGINT', () => void stop('SIGINT'));
}

/** Runs a service's async `main`; a failure to start is printed and exits 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
