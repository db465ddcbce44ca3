import type { HostWeigher } from './types';

/**
 * Nova's BuildFailureWeigher: minus the host's recent consecutive build failures. The huge default
 * multiplier (1e6) sinks a failing host below every healthy one whatever the other weighers say.
 */
export const buildFailureWeigher: HostWeigher = {
  name: 'BuildFailureWeigher',
  multiplierOption: 'build_failure_weight_multiplier',
  defaultMultiplier: 1000000.0,
  weigh: (host) => -host.record.failedBuilds,
};
