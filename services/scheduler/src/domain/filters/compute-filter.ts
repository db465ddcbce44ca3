import type { SchedulingContext } from '../context';
import type { ComputeNodeRecord } from '../host-state';
import { fail, type HostFilter, PASS } from './types';

/**
 * Nova's servicegroup `is_up` (DB driver): up when not forced down and the last heartbeat is at
 * most `service_down_time` seconds old. A service that never reported is down.
 */
export function serviceIsUp(record: ComputeNodeRecord, now: Date, serviceDownTimeSeconds: number): boolean {
  if (record.forcedDown || record.lastHeartbeatAt === undefined) return false;
  const ageMs = now.getTime() - record.lastHeartbeatAt.getTime();
  return ageMs <= serviceDownTimeSeconds * 1000;
}

/** Nova's ComputeFilter: the host's nova-compute service is enabled and up. */
export const computeFilter: HostFilter = {
  name: 'ComputeFilter',
  hostPasses(host, ctx: SchedulingContext) {
    const r = host.record;
    if (r.serviceDisabled)
      return fail(
        r.serviceDisabledReason === '' ? 'compute service is disabled' : `compute service is disabled: ${r.serviceDisabledReason}`,
      );
    if (!serviceIsUp(r, ctx.now, ctx.policy.serviceDownTimeSeconds)) return fail('compute service is down');
    return PASS;
  },
};
