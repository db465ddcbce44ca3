import { downCellsHeader, gatherHosts, isUp, zoneResolver } from '../cell-hosts';
import type { ApiDeps, ApiReply, ApiRequest, Route } from './kit';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString().replace('Z', '000'));

async function zones(req: ApiRequest, deps: ApiDeps, detailed: boolean): Promise<ApiReply> {
  const { cells, down } = await gatherHosts(deps);
  const zone = await zoneResolver(deps);
  const byZone = new Map<string, { available: boolean; hosts: Record<string, Record<string, unknown>> }>();
  for (const s of cells.flatMap((c) => c.services)) {
    const name = s.binary === 'nova-compute' ? zone(s.host) : 'internal';
    if (name === 'internal' && !detailed) continue;
    const z = byZone.get(name) ?? { available: false, hosts: {} };
    const enabledUp = !s.disabled && isUp(s);
    z.available ||= enabledUp;
    z.hosts[s.host] = { ...z.hosts[s.host], [s.binary]: { available: isUp(s), active: !s.disabled, updated_at: iso(s.lastSeenUp) } };
    byZone.set(name, z);
  }
  const info = [...byZone.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([zoneName, z]) => ({
    zoneName, zoneState: { available: z.available }, hosts: detailed ? z.hosts : null,
  }));
  return { status: 200, body: { availabilityZoneInfo: info }, headers: downCellsHeader(down) };
}

/** `/v2.1/os-availability-zone` (+ `/detail`, admin): zones of the compute hosts of every cell. */
export const AZ_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/os-availability-zone', handler: (req, deps) => zones(req, deps, false) },
  { method: 'GET', path: '/v2.1/os-availability-zone/detail', handler: (req, deps) => zones(req, deps, true), adminPolicy: 'os_compute_api:os-availability-zone:detail' },
];
