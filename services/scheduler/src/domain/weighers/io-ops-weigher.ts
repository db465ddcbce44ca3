import type { HostWeigher } from './types';

/** Nova's IoOpsWeigher: the raw score is num_io_ops; the default multiplier -1.0 prefers idle hosts. */
export const ioOpsWeigher: HostWeigher = {
  name: 'IoOpsWeigher',
  multiplierOption: 'io_ops_weight_multiplier',
  defaultMultiplier: -1.0,
  weigh: (host) => host.numIoOps,
};
