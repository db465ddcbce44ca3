import type { HostAggregate } from '../host-state';
import { fail, type HostFilter, PASS } from './types';

/**
 * Nova's host AZ: the `availability_zone` metadata of the host's aggregates (several are joined
 * with ",", sorted), or `default_availability_zone` when none names one.
 */
export function hostAvailabilityZone(aggregates: readonly HostAggregate[], defaultAz: string): string {
  const zones = [...new Set(aggregates.map((a) => a.metadata.availability_zone).filter((z): z is string => z !== undefined && z !== ''))];
  return zones.length === 0 ? defaultAz : zones.sort().join(',');
}

/**
 * Nova's AvailabilityZoneFilter: with an AZ in the request, the host's AZ must be one of the
 * requested zones (a comma-separated request matches any of them). No AZ requested: every host passes.
 */
export const availabilityZoneFilter: HostFilter = {
  name: 'AvailabilityZoneFilter',
  hostPasses(host, ctx) {
    const requested = ctx.spec.availabilityZone;
    if (requested === '') return PASS;
    const wanted = requested.split(',');
    const hostZones = host.availabilityZone.split(',');
    if (hostZones.some((z) => wanted.includes(z))) return PASS;
    return fail(`host is not in availability zone ${requested}`);
  },
};
