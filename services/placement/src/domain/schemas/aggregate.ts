import type { JsonSchema } from '../json-schema';

const LIST: JsonSchema = { type: 'array', items: { type: 'string', format: 'uuid' }, uniqueItems: true };
/** PUT /resource_providers/{uuid}/aggregates bodies: a bare list (1.1–1.18), an object with generation (1.19+). */
export const PUT_AGGREGATES_1_1 = LIST;
export const PUT_AGGREGATES_1_19: JsonSchema = {
  type: 'object',
  properties: { aggregates: LIST, resource_provider_generation: { type: 'integer' } },
  required: ['aggregates', 'resource_provider_generation'],
  additionalProperties: false,
};
