import type { CastContext } from '@cellsched/bus';
import { recordServiceHeartbeats, upsertComputeNode, upsertService } from '@cellsched/cell-db';
import { withTransaction } from '@cellsched/db';
import type { ComputeHostReport, ReportComputeHostsRequest, ServiceHeartbeatsRequest } from '@cellsched/wire';
import type { Pool, PoolClient } from 'pg';

async function recordHost(c: PoolClient, h: ComputeHostReport): Promise<void> {
  const { service } = await upsertService(c, { host: h.host, binary: h.binary || 'nova-compute', topic: h.topic || 'compute', version: h.serviceVersion });
  await upsertComputeNode(c, {
    uuid: h.computeNodeUuid, serviceId: service.id, host: h.host, hypervisorHostname: h.hypervisorHostname || h.host,
    vcpus: h.vcpus, memoryMb: h.memoryMb, localGb: h.localGb, vcpusUsed: h.vcpusUsed, memoryMbUsed: h.memoryMbUsed, localGbUsed: h.localGbUsed,
    runningVms: h.runningVms, hypervisorType: h.hypervisorType || 'fake',
    ...(h.cpuAllocationRatio > 0 ? { cpuAllocationRatio: h.cpuAllocationRatio } : {}),
    ...(h.ramAllocationRatio > 0 ? { ramAllocationRatio: h.ramAllocationRatio } : {}),
    ...(h.diskAllocationRatio > 0 ? { diskAllocationRatio: h.diskAllocationRatio } : {}),
  });
}

/**
 * `report_compute_hosts`: upserts each host's service (keeping the admin's disabled flag) and
 * compute node, all in one transaction. Idempotent: the same report twice leaves the same rows.
 */
export function reportComputeHostsHandler(pool: Pool) {
  return async (req: ReportComputeHostsRequest, ctx: CastContext): Promise<void> => {
    await withTransaction(pool, async (c) => { for (const h of req.hosts) await recordHost(c, h); });
    ctx.logger.info({ hosts: req.hosts.length }, 'compute hosts reported');
  };
}

/** `service_heartbeats`: one statement for all hosts of a compute process. Safe to repeat. */
export function serviceHeartbeatsHandler(pool: Pool) {
  return async (req: ServiceHeartbeatsRequest, ctx: CastContext): Promise<void> => {
    const unknown = await recordServiceHeartbeats(pool, req.hosts, req.binary || 'nova-compute');
    if (unknown.length > 0) ctx.logger.warn({ unknown: unknown.slice(0, 10), count: unknown.length }, 'heartbeat from unregistered hosts');
  };
}
