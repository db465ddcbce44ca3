import { addOnce, OK, type RequestFilter } from './types';

/** The trait the compute service sets on its node provider while the service is disabled. */
export const COMPUTE_STATUS_DISABLED = 'COMPUTE_STATUS_DISABLED';

/**
 * Nova's `compute_status_filter`, always on: the root provider of every candidate must not carry
 * COMPUTE_STATUS_DISABLED, so placement itself skips disabled computes.
 */
export const computeStatusFilter: RequestFilter = {
  name: 'compute_status_filter',
  enabled: () => true,
  apply(query) {
    addOnce(query.rootForbidden, COMPUTE_STATUS_DISABLED);
    return OK;
  },
};
