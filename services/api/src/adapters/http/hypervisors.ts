import type { ComputeNodeRecord, ServiceRecord } from '@cellsched/cell-db';
import { badRequest, notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import { gatherHosts, isUp } from '../cell-hosts';
import type { ApiDeps, ApiReply, ApiRequest, Route } from './kit';

interface Node {
  node: ComputeNodeRecord;
  service: ServiceRecord | undefined;
}

function summary(n: Node, req: ApiRequest): Record<string, unknown> {
  // NOTE: 2.53 made ids uuids; before it they are the (per-cell, so ambiguous) integer ids, as in Nova.
  return {
    id: atLeast(req.version, 53) ? n.node.uuid : n.node.id,
    hypervisor_hostname: n.node.hypervisorHostname,
    state: n.service !== undefined && isUp(n.service) ? 'up' : 'down',
    status: n.service?.disabled === true ? 'disabled' : 'enabled',
  };
}

function parsedCpuInfo(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

function detail(n: Node, req: ApiRequest): Record<string, unknown> {
  const { node, service } = n;
  return {
    ...summary(n, req),
    vcpus: node.vcpus,
    memory_mb: node.memoryMb,
    local_gb: node.localGb,
    vcpus_used: node.vcpusUsed,
    memory_mb_used: node.memoryMbUsed,
    local_gb_used: node.localGbUsed,
    hypervisor_type: node.hypervisorType,
    hypervisor_version: node.hypervisorVersion,
    free_ram_mb: node.memoryMb - node.memoryMbUsed,
    free_disk_gb: node.localGb - node.localGbUsed,
    current_workload: Number(node.stats.io_workload ?? 0),
    running_vms: node.runningVms,
    disk_available_least: node.localGb - node.localGbUsed,
    host_ip: '127.0.0.1',
    // NOTE: Nova's cpu_info is the driver's JSON text before 2.28, the object from it
    cpu_info: atLeast(req.version, 28) ? parsedCpuInfo(node.cpuInfo) : node.cpuInfo,
    service: {
      host: node.host,
      id: atLeast(req.version, 53) ? service?.uuid : service?.id,
      disabled_reason: service?.disabledReason ?? null,
    },
  };
}

async function nodes(deps: ApiDeps): Promise<{ nodes: Node[] }> {
  const { cells } = await gatherHosts(deps);
  const all = cells.flatMap((c) => c.nodes.map((node) => ({ node, service: c.services.find((s) => s.id === node.serviceId) })));
  return { nodes: all.sort((a, b) => a.node.hypervisorHostname.localeCompare(b.node.hypervisorHostname)) };
}

function list(detailed: boolean) {
  return async (req: ApiRequest, deps: ApiDeps): Promise<ApiReply> => {
    const r = await nodes(deps);
    return { status: 200, body: { hypervisors: r.nodes.map((n) => (detailed ? detail(n, req) : summary(n, req))) } };
  };
}

async function nodeOf(req: ApiRequest, deps: ApiDeps): Promise<Node> {
  const id = req.params.id ?? '';
  const found = (await nodes(deps)).nodes.find((n) => n.node.uuid === id || (!atLeast(req.version, 53) && String(n.node.id) === id));
  if (found === undefined) throw notFound(`Hypervisor ${id} could not be found.`);
  return found;
}

async function show(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  return { status: 200, body: { hypervisor: detail(await nodeOf(req, deps), req) } };
}

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * The `uptime` line of a simulated host, in the shape of the uptime(1) output Nova's drivers
 * return: the time now and how long its compute service has been registered.
 */
export function uptimeLine(now: Date, since: Date): string {
  const minutes = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 60_000));
  const days = Math.floor(minutes / 1440);
  const clock = `${two(now.getUTCHours())}:${two(now.getUTCMinutes())}:${two(now.getUTCSeconds())}`;
  const up = `${days > 0 ? `${days} day${days === 1 ? '' : 's'}, ` : ''}${two(Math.floor((minutes % 1440) / 60))}:${two(minutes % 60)}`;
  return ` ${clock} up ${up},  0 users,  load average: 0.00, 0.00, 0.00`;
}

/**
 * `GET /os-hypervisors/{id}/uptime` (below 2.88, as `openstack hypervisor show` calls it): the
 * summary view and the host's uptime; Nova's 400 when its compute service is down.
 */
async function uptime(req: ApiRequest, deps: ApiDeps): Promise<ApiReply> {
  const n = await nodeOf(req, deps);
  if (n.service === undefined || !isUp(n.service)) throw badRequest(`Compute service of ${n.node.host} is unavailable at this time.`);
  return { status: 200, body: { hypervisor: { ...summary(n, req), uptime: uptimeLine(new Date(), n.service.createdAt) } } };
}

/** `/v2.1/os-hypervisors` across every cell (admin only). */
export const HYPERVISOR_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/os-hypervisors', handler: list(false), adminPolicy: 'os_compute_api:os-hypervisors:list' },
  { method: 'GET', path: '/v2.1/os-hypervisors/detail', handler: list(true), adminPolicy: 'os_compute_api:os-hypervisors:list' },
  { method: 'GET', path: '/v2.1/os-hypervisors/:id', handler: show, adminPolicy: 'os_compute_api:os-hypervisors:show' },
  { method: 'GET', path: '/v2.1/os-hypervisors/:id/uptime', handler: uptime, adminPolicy: 'os_compute_api:os-hypervisors:uptime' },
];
