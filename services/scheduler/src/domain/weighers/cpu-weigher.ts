import { freeOnRoot } from '../host-state';
import type { HostWeigher } from './types';

/** Nova's CPUWeigher: more free VCPU (capacity already includes the allocation ratio) weighs more. */
export const cpuWeigher: HostWeigher = {
  name: 'CPUWeigher',
  multiplierOption: 'cpu_weight_multiplier',
  defaultMultiplier: 1.0,
  weigh: (host) => freeOnRoot(host, 'VCPU'),
};
