import { fail, type HostFilter, PASS } from './types';

/**
 * Nova's SameHostFilter: with a `same_host` scheduler hint, a host passes only when one of the
 * named instances is on it (holds a claim there). Hints naming no placed instance leave no host.
 */
export const sameHostFilter: HostFilter = {
  name: 'SameHostFilter',
  hostPasses(host, ctx) {
    const hosts = ctx.hinted?.sameHost;
    if (hosts === undefined || hosts.has(host.record.host)) return PASS;
    return fail(
      hosts.size === 0
        ? 'no instance named by the same_host hint is on any host'
        : 'no instance named by the same_host hint is on this host',
    );
  },
};
