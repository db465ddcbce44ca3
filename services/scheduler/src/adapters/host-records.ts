/**
 * How a cell's compute node and service rows become the domain's ComputeNodeRecord (pure).
 */
import type { HostRecord } from '@cellsched/cell-db';
import type { ComputeNodeRecord, HostAggregate } from '../ports';

type ServiceFields = Pick<ComputeNodeRecord, 'serviceDisabled' | 'serviceDisabledReason' | 'forcedDown' | 'lastHeartbeatAt'>;

/** What a compute node's record takes from its service row. */
function serviceFields(service: HostRecord['service']): ServiceFields {
  return {
    // NOTE: a node without a live service row behaves as a disabled, never-reporting service.
    serviceDisabled: service === undefined || service.disabled,
    serviceDisabledReason: service?.disabledReason ?? '',
    forcedDown: service?.forcedDown ?? false,
    // Nova's DB servicegroup driver: last_seen_up, else created_at.
    lastHeartbeatAt: service === undefined ? undefined : (service.lastSeenUp ?? service.createdAt),
  };
}

/**
 * The record with its service fields replaced; the record itself when they are unchanged (a
 * service row read again in the overlap). Why: a heartbeat round changes every compute's service
 * row and nothing else, and rebuilding each record from scratch (supported instances, stats,
 * aggregates) was most of the cost of taking one in.
 */
export function withService(record: ComputeNodeRecord, service: HostRecord['service']): ComputeNodeRecord {
  const f = serviceFields(service);
  if (
    f.serviceDisabled === record.serviceDisabled &&
    f.serviceDisabledReason === record.serviceDisabledReason &&
    f.forcedDown === record.forcedDown &&
    f.lastHeartbeatAt?.getTime() === record.lastHeartbeatAt?.getTime()
  )
    return record;
  return { ...record, ...f };
}

/** The domain record of a node read with its service, in `cell` (disabled: no new builds there). */
export function toDomain(
  r: HostRecord,
  cell: { readonly uuid: string; readonly disabled?: boolean },
  aggregates: readonly HostAggregate[],
): ComputeNodeRecord {
  const { node, service } = r;
  const stat = (k: string): number => Number.parseInt(node.stats[k] ?? '0', 10) || 0;
  return {
    uuid: node.uuid,
    host: node.host,
    nodename: node.hypervisorHostname,
    cellUuid: cell.uuid,
    cellDisabled: cell.disabled ?? false,
    ...serviceFields(service),
    aggregates,
    hypervisorType: node.hypervisorType,
    hypervisorVersion: node.hypervisorVersion,
    supportedInstances: node.supportedInstances.map(([arch, hvType, vmMode]) => ({ arch, hvType, vmMode })),
    numIoOps: stat('io_workload'),
    failedBuilds: stat('failed_builds'),
    vcpus: node.vcpus,
    vcpusUsed: node.vcpusUsed,
    memoryMb: node.memoryMb,
    memoryMbUsed: node.memoryMbUsed,
    localGb: node.localGb,
    localGbUsed: node.localGbUsed,
    stats: node.stats,
    cpuInfo: parseCpuInfo(node.cpuInfo),
  };
}

const NO_CPU_INFO: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Nova's cpu_info text as an object, `{}` when empty or not a JSON object. Parsed here, once per
 * record read, so no decision parses it (ComputeCapabilitiesFilter reads its keys).
 */
export function parseCpuInfo(text: string): Readonly<Record<string, unknown>> {
  if (text === '' || text === '{}') return NO_CPU_INFO;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : NO_CPU_INFO;
  } catch {
    return NO_CPU_INFO;
  }
}
