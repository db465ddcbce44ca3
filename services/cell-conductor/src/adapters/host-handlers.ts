import type { CastContext } from '@cellsched/bus';
import {
  forgetPendingProviders,
  recordComputeProcessRun,
  recordServiceHeartbeats,
  updateComputeNodesStats,
  upsertComputeNode,
  upsertService,
  type DeletedServices,
} from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { ComputeHostReport, ReportComputeHostsRequest, ServiceHeartbeatsRequest, UpdateHostStatsRequest } from '@cellsched/wire';
import type { Pool, PoolClient } from 'pg';
import type { RetiredProviders } from '../ports';
import { removeRetiredProviders, retireHostsNotServed } from './host-retirement';

async function recordHost(c: PoolClient, h: ComputeHostReport, computeProcess: string): Promise<void> {
  const { service } = await upsertService(c, {
    host: h.host,
    binary: h.binary || 'nova-compute',
    topic: h.topic || 'compute',
    version: h.serviceVersion,
    ...(computeProcess === '' ? {} : { computeProcess }),
  });
  await upsertComputeNode(c, {
    uuid: h.computeNodeUuid,
    serviceId: service.id,
    host: h.host,
    hypervisorHostname: h.hypervisorHostname || h.host,
    vcpus: h.vcpus,
    memoryMb: h.memoryMb,
    localGb: h.localGb,
    vcpusUsed: h.vcpusUsed,
    memoryMbUsed: h.memoryMbUsed,
    localGbUsed: h.localGbUsed,
    runningVms: h.runningVms,
    hypervisorType: h.hypervisorType || 'fake',
    ...(h.cpuAllocationRatio > 0 ? { cpuAllocationRatio: h.cpuAllocationRatio } : {}),
    ...(h.ramAllocationRatio > 0 ? { ramAllocationRatio: h.ramAllocationRatio } : {}),
    ...(h.diskAllocationRatio > 0 ? { diskAllocationRatio: h.diskAllocationRatio } : {}),
    supportedInstances: h.supportedInstances.map((t) => [t.arch, t.hvType, t.vmMode] as const),
    stats: h.stats,
    ...(h.cpuInfo === '' ? {} : { cpuInfo: h.cpuInfo }),
  });
}

/** What one report did: nothing (a late report of an earlier run of its process), or registered and maybe retired hosts. */
type ReportOutcome = { readonly stale: true } | { readonly stale: false; readonly retired: DeletedServices };

async function applyReport(c: PoolClient, req: ReportComputeHostsRequest): Promise<ReportOutcome> {
  const proc = req.computeProcess;
  // NOTE: first, so the process's row lock orders its reports; an earlier run's report delivered late must not revive retired hosts
  if (proc !== '' && (await recordComputeProcessRun(c, proc, req.incarnation)) === 'stale') return { stale: true };
  for (const h of req.hosts) await recordHost(c, h, proc);
  // NOTE: a host that comes back is served again: its provider (kept while instances held it) is no longer one to delete or disable
  await forgetPendingProviders(
    c,
    req.hosts.map((h) => h.computeNodeUuid),
  );
  const retired =
    proc !== '' && req.hostSet.length > 0 ? await retireHostsNotServed(c, proc, req.hostSet) : { services: [], nodeUuids: [] };
  return { stale: false, retired };
}

/**
 * `report_compute_hosts`: upserts each host's service (keeping the admin's disabled flag) and
 * compute node, all in one transaction, recording which compute process reports them. The last
 * report of a process's start carries its whole host set: the process's other hosts are retired
 * (services and nodes soft-deleted, so never chosen again) and their providers removed from
 * placement, or kept unschedulable while instances there hold allocations (host-retirement.ts).
 * A report of an earlier run of the process than one already seen changes nothing. Idempotent:
 * the same report twice leaves the same rows and retires nothing more.
 */
export function reportComputeHostsHandler(pool: Pool, providers: RetiredProviders) {
  return async (req: ReportComputeHostsRequest, ctx: CastContext): Promise<void> => {
    const outcome = await withTransaction(pool, (c) => applyReport(c, req));
    if (outcome.stale) {
      ctx.logger.warn(
        { compute_process: req.computeProcess, incarnation: req.incarnation, hosts: req.hosts.length },
        'report of an earlier run of the compute process ignored',
      );
      return;
    }
    ctx.logger.info({ hosts: req.hosts.length, compute_process: req.computeProcess || undefined }, 'compute hosts reported');
    if (outcome.retired.services.length > 0) {
      ctx.logger.warn(
        { compute_process: req.computeProcess, retired: outcome.retired.services.map((s) => s.host) },
        'compute hosts no longer served retired',
      );
    }
    if (req.hostSet.length === 0) return;
    // NOTE: the retirement is committed and the providers are queued: placement unavailable now only delays their deletion to the next sweep
    await removeRetiredProviders(pool, providers, ctx.logger, req.computeProcess).catch((err: unknown) =>
      ctx.logger.warn(
        { err, compute_process: req.computeProcess },
        'retired providers not removed yet: placement failed, the sweep retries',
      ),
    );
  };
}

/** `service_heartbeats`: one statement for all hosts of a compute process. Safe to repeat. */
export function serviceHeartbeatsHandler(pool: Pool) {
  return async (req: ServiceHeartbeatsRequest, ctx: CastContext): Promise<void> => {
    const unknown = await recordServiceHeartbeats(pool, req.hosts, req.binary || 'nova-compute');
    if (unknown.length > 0) ctx.logger.warn({ unknown: unknown.slice(0, 10), count: unknown.length }, 'heartbeat from unregistered hosts');
  };
}

/**
 * `update_host_stats` (1.4): the resource tracker stats of the hosts whose stats changed, in one
 * statement (BuildFailureWeigher's failed_builds, IoOpsWeigher's io_workload, num_instances,
 * running_vms), written only where a row differs. A node not registered (or retired) is skipped.
 * Idempotent: a redelivery writes nothing.
 */
export function updateHostStatsHandler(pool: Pool) {
  return async (req: UpdateHostStatsRequest, ctx: CastContext): Promise<void> => {
    const updated = await updateComputeNodesStats(
      pool,
      req.hosts.map((h) => ({ uuid: h.computeNodeUuid, stats: h.stats, runningVms: h.runningVms })),
    );
    ctx.logger.debug({ reported: req.hosts.length, updated }, 'host stats written where they changed');
  };
}
