import { validateSchema } from './json-schema';
import { pyPformat, pyRepr } from './py-repr';
import { POST_RP } from './schemas/resource-provider';
import { ALLOCATION_1_12 } from './schemas/allocation';

describe('JSON schema validation with Python jsonschema wording', () => {
  it('pretty-prints as pprint.pformat(width=72) does: keys sorted, one item a line when too long', () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string', maxLength: 200 }, uuid: { type: 'string', format: 'uuid' } },
      required: ['name'],
      additionalProperties: false,
    };
    expect(pyPformat(schema, 72)).toBe(`{'additionalProperties': False,
 'properties': {'name': {'maxLength': 200, 'type': 'string'},
                'uuid': {'format': 'uuid', 'type': 'string'}},
 'required': ['name'],
 'type': 'object'}`);
    expect(pyPformat([{ a: 'x'.repeat(30), b: [1, 2, 3, 'y'.repeat(40)] }, 'z'], 72)).toBe(`[{'a': '${'x'.repeat(30)}',
  'b': [1, 2, 3, '${'y'.repeat(40)}']},
 'z']`);
  });
  it('reprs values as Python does', () => {
    expect(pyRepr({ a: [1, true, null], "it's": 'x' })).toBe(`{'a': [1, True, None], "it's": 'x'}`);
  });
  it.each([
    [{}, "'name' is a required property", "Failed validating 'required' in schema:"],
    [{ name: 'a', x: 1 }, "Additional properties are not allowed ('x' was unexpected)", ''],
    [{ name: 1 }, "1 is not of type 'string'", "On instance['name']:\n    1"],
    [{ name: 'a', uuid: 'nope' }, "'nope' is not a 'uuid'", "Failed validating 'format' in schema['properties']['uuid']"],
    [{ name: 'x'.repeat(201) }, 'is too long', "Failed validating 'maxLength'"],
    [{ name: 'a', uuid: 'f7f5c5a2-6e43-4c71-a0d9-0e1b2a8f2b1' }, 'is not a', "'format'"],
  ])('%j', (body, message, more) => {
    const err = validateSchema(body, POST_RP);
    expect(err).toContain(message);
    expect(err).toContain(more);
  });
  it('reports the shallowest error and pattern-keyed properties', () => {
    const bad = { allocations: { nope: { resources: { VCPU: 1 } } }, project_id: 'p', user_id: 'u' };
    expect(validateSchema(bad, ALLOCATION_1_12)).toContain("'nope' does not match any of the regexes: '^[0-9a-fA-F-]{36}$'");
    const zero = { allocations: { 'f7f5c5a2-6e43-4c71-a0d9-0e1b2a8f2b11': { resources: { VCPU: 0 } } }, project_id: 'p', user_id: 'u' };
    expect(validateSchema(zero, ALLOCATION_1_12)).toContain('0 is less than the minimum of 1');
    expect(validateSchema({ name: 'ok' }, POST_RP)).toBeUndefined();
    for (const uuid of [
      'F7F5C5A2-6E43-4C71-A0D9-0E1B2A8F2B11',
      '{f7f5c5a2-6e43-4c71-a0d9-0e1b2a8f2b11}',
      'f7f5c5a26e434c71a0d90e1b2a8f2b11',
      'urn:uuid:f7f5c5a2-6e43-4c71-a0d9-0e1b2a8f2b11',
    ]) {
      expect(validateSchema({ name: 'ok', uuid }, POST_RP)).toBeUndefined();
    }
  });
});
