import { fail, type HostFilter, PASS } from './types';

/**
 * Nova's ServerGroupAffinityFilter: for an `affinity` group that already has members placed
 * (claims read under the group lock, plus this request's own), only their host passes.
 */
export const serverGroupAffinityFilter: HostFilter = {
  name: 'ServerGroupAffinityFilter',
  hostPasses(host, ctx) {
    const group = ctx.group;
    if (group?.policy !== 'affinity' || group.membersByHost.size === 0) return PASS;
    if (group.membersByHost.has(host.record.host)) return PASS;
    return fail(`host holds no member of affinity group ${group.uuid}`);
  },
};
