import { withTransaction } from '@cellsched/db';
import { concurrentUpdate } from '../../domain/errors';
import { atLeast } from '../../domain/microversion';
import * as schemas from '../../domain/schemas/aggregate';
import { providerAggregates, setProviderAggregates } from '../sql/aggregates';
import { getProvider, lockProvider } from '../sql/resource-providers';
import { cacheHeaders, jsonBody, type Handler, type PlacementRequest } from './kit';

function payload(req: PlacementRequest, aggregates: readonly string[], generation: number) {
  return atLeast(req.version, 19) ? { aggregates, resource_provider_generation: generation } : { aggregates };
}

/** GET /resource_providers/{uuid}/aggregates (1.1+; generation from 1.19) */
export const list: Handler = async (req) => {
  const rp = await getProvider(req.pool, req.params.uuid ?? '');
  const aggs = await providerAggregates(req.pool, rp.id);
  return { status: 200, body: payload(req, aggs, rp.generation), headers: cacheHeaders(req, new Date()) };
};

/** PUT /resource_providers/{uuid}/aggregates: replace; generation checked and bumped from 1.19. */
export const set: Handler = async (req) => {
  const uuid = req.params.uuid ?? '';
  await getProvider(req.pool, uuid);
  const withGen = atLeast(req.version, 19);
  const data = withGen
    ? jsonBody<{ aggregates: string[]; resource_provider_generation: number }>(req, schemas.PUT_AGGREGATES_1_19)
    : { aggregates: jsonBody<string[]>(req, schemas.PUT_AGGREGATES_1_1), resource_provider_generation: undefined };
  const gen = await withTransaction(req.pool, async (c) => {
    const rp = await lockProvider(c, uuid);
    if (withGen && rp.generation !== data.resource_provider_generation) {
      throw concurrentUpdate("Resource provider's generation already changed. Please update the generation and try again.");
    }
    return setProviderAggregates(c, rp, data.aggregates, withGen ? rp.generation : undefined);
  });
  return { status: 200, body: payload(req, data.aggregates, gen), headers: cacheHeaders(req, new Date()) };
};
