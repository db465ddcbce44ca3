import { randomInt } from 'node:crypto';
import { FailureError, GrpcStatus, bindService, type ServiceBinding } from '@cellsched/grpc';
import { SchedulerServiceService, type SelectDestinationsRequest as WireRequest, type SelectDestinationsResponse } from '@cellsched/wire';
import { InvalidSchedulerRequest, SCHEDULER_ERROR_CODES } from '../../domain/errors';
import { noValidHostFailure } from '../../domain/no-valid-host';
import type { SchedulerCore, SelectDestinationsRequest, SelectDestinationsResult } from '../../domain/select-destinations';
import { annotateSpan, spanEvent, spanRecording } from '@cellsched/telemetry';
import type { FilterDiagnosis } from '@cellsched/wire';

/** Placement microversion labelled on allocation requests when the caller names none. */
export const DEFAULT_ALLOCATION_REQUEST_VERSION = '1.36';

/** Maps the wire request to the domain's (MoveContext included); a seed of 0 becomes a random one (returned so it can be logged). */
export function toDomainRequest(req: WireRequest): { request: SelectDestinationsRequest; seed: number } {
  if (req.requestSpec === undefined) throw new InvalidSchedulerRequest('request_spec is required');
  const seed = req.requestSpec.seed !== 0 ? req.requestSpec.seed : randomInt(1, 2 ** 31);
  return {
    seed,
    request: {
      spec: { ...req.requestSpec, seed },
      instanceUuids: req.instanceUuids,
      numAlternates: req.numAlternates,
      allocationRequestVersion: req.allocationRequestVersion === '' ? DEFAULT_ALLOCATION_REQUEST_VERSION : req.allocationRequestVersion,
      move:
        req.move === undefined
          ? undefined
          : {
              migrationUuid: req.move.migrationUuid,
              sourceHost: req.move.sourceHost,
              sourceNode: req.move.sourceNode,
              allowSameHost: req.move.allowSameHost,
              force: req.move.force,
            },
    },
  };
}

function diagnosisEvent(d: FilterDiagnosis): void {
  spanEvent(`scheduler.stage ${d.filter}`, {
    'cellsched.scheduler.hosts_before': d.hostsBefore,
    'cellsched.scheduler.hosts_after': d.hostsAfter,
    'cellsched.scheduler.reason': d.reason === '' ? undefined : d.reason,
  });
}

/**
 * Writes why this decision went the way it did onto the server span, for operators reading a
 * trace: the instances and seed (to replay it), the chosen hosts, then one event per stage with
 * its host count (placement's candidates, snapshot, pre-filters, filters, claims) and one with
 * the heaviest hosts and their weights; for NoValidHost, the diagnosis that refused each host.
 */
export function explainOnSpan(request: SelectDestinationsRequest, result: SelectDestinationsResult): void {
  // NOTE: a few strings per decision; not built when tracing is off or the span is not sampled
  if (!spanRecording()) return;
  annotateSpan({
    'cellsched.instance_uuids': request.instanceUuids.join(','),
    'cellsched.scheduler.seed': request.spec.seed,
    'cellsched.scheduler.outcome': result.kind,
    'cellsched.scheduler.claim_retries': result.claimRetries,
    'cellsched.migration_uuid': request.move?.migrationUuid,
    'cellsched.scheduler.source_host': request.move?.sourceHost,
  });
  if (result.kind === 'no_valid_host') {
    annotateSpan({ 'cellsched.scheduler.reason': result.reason });
    result.diagnosis.forEach(diagnosisEvent);
    return;
  }
  const chosen = result.destinations.map((list) => list[0]).filter((s) => s !== undefined);
  annotateSpan({
    'cellsched.scheduler.chosen': chosen.map((s) => s.serviceHost).join(','),
    'cellsched.scheduler.sampled': result.explain.sampled,
    'cellsched.scheduler.alternates': result.destinations
      .map((list) =>
        list
          .slice(1)
          .map((s) => s.serviceHost)
          .join('+'),
      )
      .join(','),
  });
  result.explain.diagnosis.forEach(diagnosisEvent);
  spanEvent('scheduler.weighed', {
    'cellsched.scheduler.top': result.explain.top.map((t) => `${t.host}=${t.weight.toFixed(3)}`).join(' '),
  });
}

/** Observes each decision (latency, outcome) — metrics and logs hang off it. */
export type DecisionObserver = (d: {
  ms: number;
  outcome: 'selected' | 'no_valid_host' | 'invalid' | 'error';
  claimRetries: number;
}) => void;

/**
 * The gRPC SchedulerService over a SchedulerCore. SelectDestinations answers one SelectionList
 * per instance uuid (chosen host first, then alternates) with the claim retries; NoValidHost is
 * FAILED_PRECONDITION + Failure{code: "scheduler.no_valid_host", expected, diagnosis}; bad input
 * is INVALID_ARGUMENT + `scheduler.request.invalid` (nothing read or written). Idempotent per
 * instance uuid (every claim replaces the consumer's previous one).
 */
export function schedulerServiceBinding(
  core: SchedulerCore,
  observe: DecisionObserver = () => undefined,
  admit: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
): ServiceBinding {
  return bindService(SchedulerServiceService, {
    selectDestinations: async (req, ctx): Promise<SelectDestinationsResponse> => {
      const started = performance.now();
      const done = (outcome: Parameters<DecisionObserver>[0]['outcome'], claimRetries: number): void =>
        observe({ ms: performance.now() - started, outcome, claimRetries });
      let result;
      try {
        const { request, seed } = toDomainRequest(req);
        if (req.requestSpec?.seed === 0) ctx.logger.debug({ seed }, 'request without seed: picked one');
        result = await admit(() => core.selectDestinations(request));
        explainOnSpan(request, result);
      } catch (err) {
        if (err instanceof InvalidSchedulerRequest) {
          done('invalid', 0);
          throw FailureError.of(SCHEDULER_ERROR_CODES.invalidRequest, err.message, { status: GrpcStatus.INVALID_ARGUMENT, expected: true });
        }
        done('error', 0);
        throw err;
      }
      done(result.kind, result.claimRetries);
      if (result.kind === 'no_valid_host') {
        throw new FailureError(noValidHostFailure(result.reason, result.diagnosis, result.claimRetries), {
          status: GrpcStatus.FAILED_PRECONDITION,
        });
      }
      return { destinations: result.destinations.map((selections) => ({ selections })), claimRetries: result.claimRetries };
    },
  });
}
