import type { JsonSchema } from '../json-schema';
import { MAX_INT, RC_PATTERN, SQL_SP_FLOAT_MAX } from './common';

const int1: JsonSchema = { type: 'integer', maximum: MAX_INT, minimum: 1 };
/** Inventory request schemas (placement/schemas/inventory.py). */
export const BASE_INVENTORY: JsonSchema = {
  type: 'object',
  properties: {
    resource_provider_generation: { type: 'integer' },
    total: int1,
    reserved: { type: 'integer', maximum: MAX_INT, minimum: 0 },
    min_unit: int1,
    max_unit: int1,
    step_size: int1,
    allocation_ratio: { type: 'number', maximum: SQL_SP_FLOAT_MAX },
  },
  required: ['total', 'resource_provider_generation'],
  additionalProperties: false,
};
export const POST_INVENTORY: JsonSchema = {
  ...BASE_INVENTORY,
  properties: { ...BASE_INVENTORY.properties, resource_class: { type: 'string', pattern: RC_PATTERN } },
  required: ['total', 'resource_class'],
};
export const PUT_INVENTORY_RECORD: JsonSchema = { ...BASE_INVENTORY, required: ['total'] };
export const PUT_INVENTORY: JsonSchema = {
  type: 'object',
  properties: {
    resource_provider_generation: { type: 'integer' },
    inventories: { type: 'object', patternProperties: { [RC_PATTERN]: PUT_INVENTORY_RECORD } },
  },
  required: ['resource_provider_generation', 'inventories'],
  additionalProperties: false,
};
