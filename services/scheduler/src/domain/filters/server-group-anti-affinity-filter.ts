import { groupMembersOnHost } from '../context';
import { fail, type HostFilter, PASS } from './types';

/**
 * Nova's ServerGroupAntiAffinityFilter: for an `anti-affinity` group, a host passes while it
 * holds fewer members than the group's `max_server_per_host` rule (default 1).
 */
export const serverGroupAntiAffinityFilter: HostFilter = {
  name: 'ServerGroupAntiAffinityFilter',
  hostPasses(host, ctx) {
    const group = ctx.group;
    if (group?.policy !== 'anti-affinity') return PASS;
    const onHost = groupMembersOnHost(ctx, host.record.host);
    if (onHost < group.maxServerPerHost) return PASS;
    return fail(
      `host already holds ${onHost} member(s) of anti-affinity group ${group.uuid} (max_server_per_host ${group.maxServerPerHost})`,
    );
  },
};
