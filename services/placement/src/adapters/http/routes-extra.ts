import { listAllocationCandidates } from './allocation-candidates';
import type { RouteDef } from './kit';
import { reshape } from './reshaper';

/**
 * Routes kept apart from the core table: allocation candidates (owned by the candidates
 * module) and the reshaper.
 */
export const EXTRA_ROUTES: readonly RouteDef[] = [
  { path: '/allocation_candidates', methods: { GET: { handler: listAllocationCandidates, policy: 'read', minVersion: 10, json: true } } },
  { path: '/reshaper', methods: { POST: { handler: reshape, policy: 'write', minVersion: 30, requireJson: true } } },
];
