import { groupMembersOnHost } from '../context';
import type { HostWeigher } from './types';

/** Nova's ServerGroupSoftAntiAffinityWeigher: for a `soft-anti-affinity` group, each member on the host weighs -1. */
export const serverGroupSoftAntiAffinityWeigher: HostWeigher = {
  name: 'ServerGroupSoftAntiAffinityWeigher',
  multiplierOption: 'soft_anti_affinity_weight_multiplier',
  defaultMultiplier: 1.0,
  weigh: (host, ctx) => (ctx.group?.policy === 'soft-anti-affinity' ? -groupMembersOnHost(ctx, host.record.host) : 0),
};
