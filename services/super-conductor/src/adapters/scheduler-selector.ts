import { createGrpcClient, isFailureError, type GrpcClient } from '@cellsched/grpc';
import { FAILURE_CODES, SchedulerServiceClient, type MoveContext, type RequestSpec } from '@cellsched/wire';
import type { Logger } from 'pino';
import type { DestinationSelector, SelectOutcome } from '../ports';

/** Placement microversion of the allocation requests the conductors replay. */
const ALLOCATION_REQUEST_VERSION = '1.36';

/**
 * {@link DestinationSelector} over the scheduler's gRPC replicas. SelectDestinations is
 * idempotent per instance uuid (replace claims; a move's per migration), so it is retried on another replica,
 * deadlines included. NoValidHost and other non-retryable failures are outcomes; a
 * retryable failure throws (the cast is redelivered later).
 */
export class GrpcDestinationSelector implements DestinationSelector {
  private readonly grpc: GrpcClient<typeof SchedulerServiceClient.service>;

  constructor(opts: { addresses: readonly string[]; deadlineMs: number; logger: Logger }) {
    this.grpc = createGrpcClient(SchedulerServiceClient, {
      addresses: opts.addresses,
      deadlineMs: opts.deadlineMs,
      maxAttempts: 3,
      idempotent: ['selectDestinations'],
      logger: opts.logger,
    });
  }

  async selectDestinations(
    spec: RequestSpec,
    instanceUuids: readonly string[],
    numAlternates: number,
    move?: MoveContext,
  ): Promise<SelectOutcome> {
    try {
      const r = await this.grpc.selectDestinations(
        { requestSpec: spec, instanceUuids: [...instanceUuids], numAlternates, allocationRequestVersion: ALLOCATION_REQUEST_VERSION, move },
        { retryOnDeadlineExceeded: true },
      );
      return { kind: 'selected', destinations: r.destinations.map((d) => d.selections) };
    } catch (err) {
      if (!isFailureError(err)) throw err;
      if (err.failure.code === FAILURE_CODES.scheduler.noValidHost) return { kind: 'no_valid_host', failure: err.failure };
      if (err.failure.retryable) throw err;
      return { kind: 'failed', failure: err.failure };
    }
  }

  close(): void {
    this.grpc.close();
  }
}
