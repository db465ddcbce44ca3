import { parseExtraSpecs, parseExtraSpecUpdate, parseFlavorCreate, parseFlavorUpdate, parseTenantAccess } from './flavor-bodies';
import type { Microversion } from './microversion';

const v = (minor: number): Microversion => ({ major: 2, minor });
const err = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return `${(e as { status: number }).status} ${(e as Error).message}`;
  }
};
const OK = { name: 'f', ram: 512, vcpus: 1, disk: 0 };
const create = (flavor: Record<string, unknown>, minor = 1): string => err(() => parseFlavorCreate({ flavor }, v(minor)));

describe('flavor create body', () => {
  it("reads Nova's defaults, strings holding integers, numeric ids and the 2.55 description", () => {
    expect(parseFlavorCreate({ flavor: OK }, v(1))).toEqual({
      name: 'f',
      flavorid: undefined,
      memoryMb: 512,
      vcpus: 1,
      rootGb: 0,
      ephemeralGb: 0,
      swap: 0,
      rxtxFactor: 1,
      isPublic: true,
      description: null,
    });
    expect(
      parseFlavorCreate(
        { flavor: { ...OK, id: 42, ram: '64', swap: '8', rxtx_factor: '0.5', 'os-flavor-access:is_public': 'off', description: 'd' } },
        v(55),
      ),
    ).toMatchObject({ flavorid: '42', memoryMb: 64, swap: 8, rxtxFactor: 0.5, isPublic: false, description: 'd' });
    expect(parseFlavorCreate({ flavor: { ...OK, id: null } }, v(1)).flavorid).toBeUndefined();
  });

  it.each([
    [{ ...OK, ram: 0 }, 1, '400 Invalid input for field/attribute ram. Value: 0. 0 is less than the minimum of 1'],
    [{ ...OK, vcpus: '0' }, 1, '400 Invalid input received: vcpus must be >= 1'],
    [{ ...OK, disk: '2147483648' }, 1, '400 Invalid input received: disk must be <= 2147483647'],
    [
      { ...OK, 'OS-FLV-EXT-DATA:ephemeral': -1 },
      1,
      '400 Invalid input for field/attribute OS-FLV-EXT-DATA:ephemeral. Value: -1. -1 is less than the minimum of 0',
    ],
    [{ ...OK, swap: true }, 1, "400 Invalid input for field/attribute swap. Value: true. True is not of type 'integer', 'string'"],
    [{ ...OK, id: '' }, 1, "400 Invalid input for field/attribute id. Value: . '' is too short"],
    [
      { ...OK, id: 'trail ' },
      1,
      "400 Invalid input for field/attribute id. Value: trail . 'trail ' does not match '^(?! )[a-zA-Z0-9. _-]+(?<! )$'",
    ],
    [
      { ...OK, rxtx_factor: '1.' },
      1,
      "400 Invalid input for field/attribute rxtx_factor. Value: 1.. '1.' does not match '^[0-9]+(\\.[0-9]+)?$'",
    ],
    [{ ...OK, name: '' }, 1, "400 Invalid input for field/attribute name. Value: . '' is too short"],
    [{ vcpus: 1 }, 1, "400 Invalid input for field/attribute flavor. Value: {'vcpus': 1}. 'name' is a required property"],
    [
      { ...OK, description: 'x' },
      54,
      "400 Invalid input for field/attribute flavor. Additional properties are not allowed ('description' was unexpected)",
    ],
    [
      { ...OK, description: 'x'.repeat(65536) },
      55,
      `400 Invalid input for field/attribute description. Value: ${'x'.repeat(65536)}. '${'x'.repeat(65536)}' is too long`,
    ],
  ])('refused: case %#', (flavor, minor, message) => {
    expect(create(flavor, minor)).toBe(message);
  });

  it('judges the top level as jsonschema does, with bare messages', () => {
    expect(err(() => parseFlavorCreate(null, v(1)))).toBe("400 None is not of type 'object'");
    expect(err(() => parseFlavorCreate({}, v(1)))).toBe("400 'flavor' is a required property");
    expect(err(() => parseFlavorCreate({ flavor: [] }, v(1)))).toBe(
      "400 Invalid input for field/attribute flavor. Value: []. [] is not of type 'object'",
    );
    expect(err(() => parseFlavorCreate({ flavor: OK, x: 1, y: 2 }, v(1)))).toBe(
      "400 Additional properties are not allowed ('x', 'y' were unexpected)",
    );
  });
});

describe('flavor update, extra specs and tenant access bodies', () => {
  it('update takes the description only, null allowed', () => {
    expect(parseFlavorUpdate({ flavor: { description: null } })).toBeNull();
    expect(parseFlavorUpdate({ flavor: { description: 'd' } })).toBe('d');
    expect(err(() => parseFlavorUpdate({ flavor: { description: 1 } }))).toBe(
      "400 Invalid input for field/attribute description. Value: 1. 1 is not of type 'string', 'null'",
    );
  });

  it('extra specs keep numbers as text and refuse bad keys and values', () => {
    expect(parseExtraSpecs('extra_specs', { 'hw:a': 'x', 'quota:b': 2.5 })).toEqual({ 'hw:a': 'x', 'quota:b': '2.5' });
    expect(err(() => parseExtraSpecs('extra_specs', { 'a/b': 'x', 'c d': 'y' }))).toBe(
      "400 Invalid input for field/attribute extra_specs. Additional properties are not allowed ('a/b' was unexpected)",
    );
    expect(err(() => parseExtraSpecs('extra_specs', { k: null }))).toBe(
      "400 Invalid input for field/attribute k. Value: null. None is not of type 'string', 'number'",
    );
    expect(err(() => parseExtraSpecUpdate({ k: 'v' }, 'other'))).toBe('400 Request body and URI mismatch');
    expect(err(() => parseExtraSpecUpdate({ 'a/b': 'v' }, 'a/b'))).toBe("400 Additional properties are not allowed ('a/b' was unexpected)");
    expect(parseExtraSpecUpdate({ k: 1 }, 'k')).toEqual({ k: '1' });
  });

  it('tenant access names one project', () => {
    expect(parseTenantAccess({ addTenantAccess: { tenant: 'demo' } }, 'addTenantAccess')).toBe('demo');
    expect(err(() => parseTenantAccess({ removeTenantAccess: { tenant: 7 } }, 'removeTenantAccess'))).toBe(
      "400 Invalid input for field/attribute tenant. Value: 7. 7 is not of type 'string'",
    );
    expect(err(() => parseTenantAccess({ addTenantAccess: { tenant: 'x'.repeat(256) } }, 'addTenantAccess'))).toMatch(/is too long$/);
  });
});
