import { fail, type HostFilter, PASS } from './types';

/**
 * Nova's DifferentHostFilter: with a `different_host` scheduler hint, a host passes only when none
 * of the named instances is on it (holds a claim there).
 */
export const differentHostFilter: HostFilter = {
  name: 'DifferentHostFilter',
  hostPasses(host, ctx) {
    if (ctx.hinted?.differentHost?.has(host.record.host) !== true) return PASS;
    return fail('an instance named by the different_host hint is on this host');
  },
};
