import type { JsonSchema } from '../json-schema';

/** Request schemas of /resource_providers, by microversion. */
export const POST_RP: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 200 }, uuid: { type: 'string', format: 'uuid' } },
  required: ['name'],
  additionalProperties: false,
};
export const PUT_RP: JsonSchema = { ...POST_RP, properties: { name: { type: 'string', maxLength: 200 } } };
const parent: JsonSchema = { anyOf: [{ type: 'string', format: 'uuid' }, { type: 'null' }] };
export const POST_RP_1_14: JsonSchema = { ...POST_RP, properties: { ...POST_RP.properties, parent_provider_uuid: parent } };
export const PUT_RP_1_14: JsonSchema = { ...PUT_RP, properties: { ...PUT_RP.properties, parent_provider_uuid: parent } };

export const GET_RPS_1_0: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, uuid: { type: 'string', format: 'uuid' } },
  additionalProperties: false,
};
export const GET_RPS_1_3: JsonSchema = { ...GET_RPS_1_0, properties: { ...GET_RPS_1_0.properties, member_of: { type: 'string' } } };
export const GET_RPS_1_4: JsonSchema = { ...GET_RPS_1_3, properties: { ...GET_RPS_1_3.properties, resources: { type: 'string' } } };
export const GET_RPS_1_14: JsonSchema = {
  ...GET_RPS_1_4,
  properties: { ...GET_RPS_1_4.properties, in_tree: { type: 'string', format: 'uuid' } },
};
export const GET_RPS_1_18: JsonSchema = { ...GET_RPS_1_14, properties: { ...GET_RPS_1_14.properties, required: { type: 'string' } } };
