import type { JsonSchema } from '../json-schema';
import { CONSUMER_TYPE_GET_PATTERN, CONSUMER_TYPE_PATTERN, RC_PATTERN, UUID_PATTERN } from './common';

/** Allocation request schemas by microversion (placement/schemas/allocation.py). */
const resources: JsonSchema = {
  type: 'object',
  minProperties: 1,
  patternProperties: { [RC_PATTERN]: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
};
export const ALLOCATION_1_0: JsonSchema = {
  type: 'object',
  properties: {
    allocations: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          resource_provider: {
            type: 'object',
            properties: { uuid: { type: 'string', format: 'uuid' } },
            additionalProperties: false,
            required: ['uuid'],
          },
          resources,
        },
        required: ['resource_provider', 'resources'],
        additionalProperties: false,
      },
    },
  },
  required: ['allocations'],
  additionalProperties: false,
};
const idString: JsonSchema = { type: 'string', minLength: 1, maxLength: 255 };
export const ALLOCATION_1_8: JsonSchema = {
  ...ALLOCATION_1_0,
  properties: { ...ALLOCATION_1_0.properties, project_id: idString, user_id: idString },
  required: ['allocations', 'project_id', 'user_id'],
};
const dictAllocations = (minProperties: number): JsonSchema => ({
  type: 'object',
  minProperties,
  patternProperties: {
    [UUID_PATTERN]: {
      type: 'object',
      properties: { generation: { type: 'integer' }, resources },
      required: ['resources'],
      additionalProperties: false,
    },
  },
  additionalProperties: false,
});
export const ALLOCATION_1_12: JsonSchema = {
  type: 'object',
  properties: { allocations: dictAllocations(1), project_id: idString, user_id: idString },
  additionalProperties: false,
  required: ['allocations', 'project_id', 'user_id'],
};
const DELETABLE: JsonSchema = { ...ALLOCATION_1_12, properties: { ...ALLOCATION_1_12.properties, allocations: dictAllocations(0) } };
const gen: JsonSchema = { type: ['integer', 'null'], additionalProperties: false };
export const ALLOCATION_1_28: JsonSchema = {
  ...DELETABLE,
  properties: { ...DELETABLE.properties, consumer_generation: gen },
  required: ['allocations', 'project_id', 'user_id', 'consumer_generation'],
};
const mappings: JsonSchema = {
  type: 'object',
  minProperties: 1,
  patternProperties: { '^[a-zA-Z0-9_-]{1,64}$': { type: 'array', minItems: 1, items: { type: 'string', format: 'uuid' } } },
};
export const ALLOCATION_1_34: JsonSchema = { ...ALLOCATION_1_28, properties: { ...ALLOCATION_1_28.properties, mappings } };
export const ALLOCATION_1_38: JsonSchema = {
  ...ALLOCATION_1_34,
  properties: {
    ...ALLOCATION_1_34.properties,
    consumer_type: { type: 'string', pattern: CONSUMER_TYPE_PATTERN, minLength: 1, maxLength: 255 },
  },
  required: [...(ALLOCATION_1_34.required ?? []), 'consumer_type'],
};

const post = (perConsumer: JsonSchema, minProperties = 1): JsonSchema => ({
  type: 'object',
  minProperties,
  additionalProperties: false,
  patternProperties: { [UUID_PATTERN]: perConsumer },
});
export const POST_ALLOCATIONS_1_13 = post(DELETABLE);
export const POST_ALLOCATIONS_1_28 = post(ALLOCATION_1_28);
export const POST_ALLOCATIONS_1_34 = post(ALLOCATION_1_34);
export const POST_ALLOCATIONS_1_38 = post(ALLOCATION_1_38);
/** The reshaper's allocations may be empty. */
export const reshaperAllocations = (s: JsonSchema): JsonSchema => ({ ...s, minProperties: 0 });

export const GET_USAGES_1_9: JsonSchema = {
  type: 'object',
  properties: { project_id: idString, user_id: idString },
  required: ['project_id'],
  additionalProperties: false,
};
export const GET_USAGES_1_38: JsonSchema = {
  ...GET_USAGES_1_9,
  properties: {
    ...GET_USAGES_1_9.properties,
    consumer_type: { type: 'string', pattern: CONSUMER_TYPE_GET_PATTERN, minLength: 1, maxLength: 255 },
  },
};
