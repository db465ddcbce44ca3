import { groupMembersOnHost } from '../context';
import type { HostWeigher } from './types';

/** Nova's ServerGroupSoftAffinityWeigher: for a `soft-affinity` group, members already on the host weigh more. */
export const serverGroupSoftAffinityWeigher: HostWeigher = {
  name: 'ServerGroupSoftAffinityWeigher',
  multiplierOption: 'soft_affinity_weight_multiplier',
  defaultMultiplier: 1.0,
  weigh: (host, ctx) => (ctx.group?.policy === 'soft-affinity' ? groupMembersOnHost(ctx, host.record.host) : 0),
};
