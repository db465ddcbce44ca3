// The Echo test service's cast handler, as its proto describes it: it throws
// `fail_times` times before succeeding (-1: always), recording every delivery it sees.
import { EchoCastRequest } from '@cellsched/wire';
import type { CastContext } from '../../src';

export interface Seen {
  readonly request: EchoCastRequest;
  readonly ctx: CastContext;
}

export const FAST_RETRY = { initialDelayMs: 10, maxDelayMs: 40, factor: 2, jitter: 0.5 } as const;

/** An error the way services throw them: a Failure-style code and a retryable flag. */
export class EchoFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = true,
  ) {
    super(message);
  }
}

export function echoHandler(seen: Seen[]) {
  return async (request: EchoCastRequest, ctx: CastContext): Promise<void> => {
    seen.push({ request, ctx });
    if (request.failTimes === -1 || ctx.attempt <= request.failTimes) {
      throw new EchoFailure('echo.induced_failure', `induced failure on attempt ${ctx.attempt}`);
    }
  };
}

export function echo(seq: number, failTimes = 0, text = `m${seq}`): EchoCastRequest {
  return EchoCastRequest.fromPartial({ text, failTimes, seq });
}
