import { freeOnRoot } from '../host-state';
import type { HostWeigher } from './types';

/** Nova's DiskWeigher: more free DISK_GB on the compute node weighs more. */
export const diskWeigher: HostWeigher = {
  name: 'DiskWeigher',
  multiplierOption: 'disk_weight_multiplier',
  defaultMultiplier: 1.0,
  weigh: (host) => freeOnRoot(host, 'DISK_GB'),
};
