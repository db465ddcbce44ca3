import type { ServiceRecord } from '@cellsched/cell-db';
import { gatherHosts, isUp, zoneResolver } from '../cell-hosts';
import type { ApiDeps, ApiReply, ApiRequest, Route } from './kit';

// Nova's os-availability-zone (nova/api/openstack/compute/availability_zone.py and
// nova/availability_zones.py): a compute service's zone is its host's aggregate zone, else the
// default zone; every other service is in the internal zone. A zone is available when one of
// its services is enabled; a zone of disabled services only is not.

/** Nova's `internal_service_availability_zone`. */
const INTERNAL_ZONE = 'internal';
/** Services Nova leaves out of the detail (not maintained as the others). */
const API_SERVICES = ['nova-osapi_compute', 'nova-metadata'];

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString().replace('Z', '000'));
/** Python's `sorted` of strings: by code point. */
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface Zoned {
  readonly service: ServiceRecord;
  readonly zone: string;
}

/** Nova's `get_availability_zones`: zones of enabled services, then zones of disabled ones only, each sorted. */
function splitZones(services: readonly Zoned[]): { available: string[]; notAvailable: string[] } {
  const available = new Set(services.filter((s) => !s.service.disabled).map((s) => s.zone));
  const notAvailable = new Set(services.filter((s) => s.service.disabled && !available.has(s.zone)).map((s) => s.zone));
  return { available: [...available].sort(byCodePoint), notAvailable: [...notAvailable].sort(byCodePoint) };
}

/** The hosts of a zone as Nova's detail shows them: enabled services only, API services left out. */
function zoneHosts(services: readonly Zoned[], zone: string): Record<string, Record<string, unknown>> {
  const hosts: Record<string, Record<string, unknown>> = {};
  for (const { service: s } of services.filter((x) => x.zone === zone && !x.service.disabled && !API_SERVICES.includes(x.service.binary))) {
    hosts[s.host] = { ...hosts[s.host], [s.binary]: { available: isUp(s), active: true, updated_at: iso(s.lastSeenUp) } };
  }
  return hosts;
}

async function zones(req: ApiRequest, deps: ApiDeps, detailed: boolean): Promise<ApiReply> {
  const { cells } = await gatherHosts(deps);
  const zoneOf = await zoneResolver(deps);
  const services = cells
    .flatMap((c) => c.services)
    .map((service) => ({ service, zone: service.binary === 'nova-compute' ? zoneOf(service.host) : INTERNAL_ZONE }));
  const { available, notAvailable } = splitZones(services);
  const shown = (z: string): boolean => detailed || z !== INTERNAL_ZONE;
  const info = [
    ...available
      .filter(shown)
      .map((zoneName) => ({ zoneName, zoneState: { available: true }, hosts: detailed ? zoneHosts(services, zoneName) : null })),
    ...notAvailable.filter(shown).map((zoneName) => ({ zoneName, zoneState: { available: false }, hosts: null })),
  ];
  return { status: 200, body: { availabilityZoneInfo: info } };
}

/** `/v2.1/os-availability-zone` (+ `/detail`, admin): zones of the services of every cell. */
export const AZ_ROUTES: readonly Route[] = [
  { method: 'GET', path: '/v2.1/os-availability-zone', handler: (req, deps) => zones(req, deps, false) },
  {
    method: 'GET',
    path: '/v2.1/os-availability-zone/detail',
    handler: (req, deps) => zones(req, deps, true),
    adminPolicy: 'os_compute_api:os-availability-zone:detail',
  },
];
