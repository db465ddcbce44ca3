import { freeOnRoot } from '../host-state';
import type { HostWeigher } from './types';

/** Nova's RAMWeigher: more free MEMORY_MB weighs more (spread); a negative multiplier stacks. */
export const ramWeigher: HostWeigher = {
  name: 'RAMWeigher',
  multiplierOption: 'ram_weight_multiplier',
  defaultMultiplier: 1.0,
  weigh: (host) => freeOnRoot(host, 'MEMORY_MB'),
};
