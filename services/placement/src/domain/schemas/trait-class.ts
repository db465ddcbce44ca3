import type { JsonSchema } from '../json-schema';
import { CUSTOM_RC_PATTERN, CUSTOM_TRAIT_PATTERN } from './common';

/** Trait and resource class request schemas (placement/schemas/trait.py, resource_class.py). */
export const TRAIT: JsonSchema = { type: 'string', minLength: 1, maxLength: 255 };
export const CUSTOM_TRAIT: JsonSchema = { ...TRAIT, pattern: CUSTOM_TRAIT_PATTERN };
export const SET_TRAITS_FOR_RP: JsonSchema = {
  type: 'object',
  properties: { traits: { type: 'array', items: TRAIT }, resource_provider_generation: { type: 'integer' } },
  required: ['traits', 'resource_provider_generation'],
  additionalProperties: false,
};
export const LIST_TRAITS: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, associated: { type: 'string' } },
  additionalProperties: false,
};
export const POST_RC: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string', pattern: CUSTOM_RC_PATTERN, maxLength: 255 } },
  required: ['name'],
  additionalProperties: false,
};
