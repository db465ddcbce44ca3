import { notFound } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import * as schemas from '../../domain/schemas/allocation';
import { providerUsages, totalUsages } from '../sql/allocations';
import { findProvider } from '../sql/resource-providers';
import { cacheHeaders, validateQuery, type Handler } from './kit';

/** GET /resource_providers/{uuid}/usages */
export const forProvider: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  const rp = await findProvider(req.pool, uuid);
  if (!rp) throw notFound(`No resource provider with uuid ${uuid} found: No resource provider with uuid ${uuid} found`);
  const usages = await providerUsages(req.pool, rp.id);
  return { status: 200, body: { resource_provider_generation: rp.generation, usages }, headers: cacheHeaders(req, new Date()) };
};

/** GET /usages?project_id&user_id&consumer_type (1.9+; grouped by consumer type from 1.38). */
export const total: Handler = async (req) => {
  const byType = atLeast(req.version, 38);
  const q = validateQuery(req, byType ? schemas.GET_USAGES_1_38 : schemas.GET_USAGES_1_9);
  const usages = await totalUsages(req.pool, { projectId: q.project_id ?? '', userId: q.user_id, consumerType: q.consumer_type, byType });
  return { status: 200, body: { usages }, headers: cacheHeaders(req, new Date()) };
};
