import { ApiError } from './errors';
import { displayNames, parseCreateServer } from './server-create';

const V21 = { major: 2, minor: 1 };
const V237 = { major: 2, minor: 37 };
const IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6';
const server = (extra: Record<string, unknown> = {}): unknown => ({ server: { name: 'vm', imageRef: IMAGE, flavorRef: '1', ...extra } });

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    return (e as ApiError).message;
  }
  throw new Error('expected a 400');
}

describe('parseCreateServer', () => {
  it('takes refs as ids or URLs, counts as ints or digit strings, hints as strings or lists', () => {
    const input = parseCreateServer(
      {
        server: {
          name: 'vm',
          imageRef: `http://glance/images/${IMAGE}`,
          flavorRef: 'http://nova/flavors/42',
          min_count: '2',
          max_count: 3,
        },
        'os:scheduler_hints': { group: IMAGE.toUpperCase(), same_host: [IMAGE, IMAGE], foo: 'bar' },
      },
      V21,
    );
    expect(input).toMatchObject({
      imageRef: IMAGE,
      flavorRef: '42',
      minCount: 2,
      maxCount: 3,
      group: IMAGE,
      schedulerHints: { same_host: `${IMAGE},${IMAGE}`, foo: 'bar' },
    });
    expect(parseCreateServer(server({ flavorRef: 7 }), V21).flavorRef).toBe('7');
    expect(parseCreateServer(server(), V21)).toMatchObject({ minCount: 1, maxCount: 1, networks: undefined, returnReservationId: false });
  });

  it.each([
    [{}, "'server' is a required property"],
    [
      server({ name: ' x' }),
      "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace.",
    ],
    [server({ name: 'a\u0007b' }), "An invalid 'name' value was provided."],
    [server({ name: 'x'.repeat(256) }), 'must be 1-255 characters'],
    [
      { ...(server() as object), extra: 1 },
      "Invalid input for field/attribute root. Additional properties are not allowed ('extra' was unexpected)",
    ],
    [server({ description: 'd' }), "Additional properties are not allowed ('description' was unexpected)"],
    [server({ metadata: { 'a/b': 'x' } }), "Additional properties are not allowed ('a/b' was unexpected)"],
    [server({ metadata: { a: 1 } }), "is not of type 'string'"],
    [server({ security_groups: [{ name: 'web' }] }), 'Security group web not found.'],
    [server({ key_name: 'mykey' }), 'Invalid key_name provided.'],
    [server({ user_data: 'not base64!' }), "is not a 'base64'"],
    [server({ config_drive: 'maybe' }), 'is not one of the allowed boolean values'],
    [server({ 'OS-DCF:diskConfig': 'auto' }), "is not one of ['AUTO', 'MANUAL']"],
    [server({ max_count: 1001 }), '1001 is greater than the maximum of 1000'],
    [server({ availability_zone: 'a:b' }), "An invalid 'name' value was provided."],
    [{ ...(server() as object), 'os:scheduler_hints': { different_host: 'h1' } }, 'is not valid under any of the given schemas'],
    [{ ...(server() as object), 'os:scheduler_hints': { build_near_host_ip: '300.1.1.1' } }, 'is not valid under any of the given schemas'],
    [server({ name: 5 }), "is not of type 'string'"],
    [server({ imageRef: 'abc' }), 'Invalid imageRef provided.'],
    [server({ max_count: 1.5 }), "is not of type 'integer'"],
    [server({ min_count: 2, max_count: 1 }), 'min_count must be <= max_count'],
    [server({ return_reservation_id: 'maybe' }), "is not of type 'boolean'"],
    [server({ return_reservation_id: null }), "is not of type 'boolean'"],
    [server({ networks: [{ uuid: IMAGE }] }), 'no Neutron'],
    [{ ...(server() as object), 'os:scheduler_hints': { group: 'g1' } }, 'is not valid under any of the given schemas'],
    [{ ...(server() as object), 'os:scheduler_hints': { x: 1 } }, "is not of type 'string', 'array'"],
  ])('rejects %j', (body, message) => {
    expect(messageOf(() => parseCreateServer(body, V21))).toContain(message);
  });

  it("accepts Nova's optional fields, booleans as Nova's strings, and description from 2.19", () => {
    const body = server({
      metadata: { 'role:web': 'yes' },
      security_groups: [{ name: 'default' }],
      user_data: 'aGVsbG8=',
      config_drive: 'True',
      adminPass: 'x',
      'OS-DCF:diskConfig': 'AUTO',
      return_reservation_id: 'yes',
      availability_zone: 'nova',
    });
    expect(parseCreateServer(body, V21)).toMatchObject({ returnReservationId: true, availabilityZone: 'nova' });
    expect(parseCreateServer(server({ description: null }), { major: 2, minor: 19 }).name).toBe('vm');
  });

  it('requires networks "none" or "auto" from 2.37 only', () => {
    expect(messageOf(() => parseCreateServer(server(), V237))).toContain("'networks' is a required property");
    expect(parseCreateServer(server({ networks: 'auto' }), V237).networks).toBe('auto');
    expect(messageOf(() => parseCreateServer(server({ networks: 'none' }), V21))).toContain("is not of type 'array'");
  });

  it('block_device_mapping_v2: volume_type is an unknown key before 2.67, known from 2.67; any mapping is refused (no block storage)', () => {
    const bdm = [{ source_type: 'image', uuid: IMAGE, destination_type: 'volume', boot_index: 0, volume_size: 1, volume_type: 'lvm' }];
    const at = (minor: number): { major: number; minor: number } => ({ major: 2, minor });
    expect(messageOf(() => parseCreateServer(server({ networks: 'none', block_device_mapping_v2: bdm }), at(66)))).toMatch(
      /^Invalid input for field\/attribute 0\. Value: .*Additional properties are not allowed \('volume_type' was unexpected\)$/,
    );
    expect(messageOf(() => parseCreateServer(server({ networks: 'none', block_device_mapping_v2: bdm }), at(67)))).toContain(
      'Block device mappings are not supported by this deployment',
    );
    expect(messageOf(() => parseCreateServer(server({ networks: 'none', block_device_mapping_v2: [{ volume_type: 7 }] }), at(67)))).toBe(
      "Invalid input for field/attribute volume_type. Value: 7. 7 is not of type 'string', 'null'",
    );
    expect(messageOf(() => parseCreateServer(server({ networks: 'none', block_device_mapping_v2: [{ tag: 't' }] }), at(40)))).toContain(
      "'tag' was unexpected",
    );
    expect(messageOf(() => parseCreateServer(server({ block_device_mapping_v2: {} }), V21))).toContain("is not of type 'array'");
    expect(parseCreateServer(server({ networks: 'none', block_device_mapping_v2: [] }), at(67)).name).toBe('vm');
  });
});

it('names multi-create servers name-1..n', () => {
  expect(displayNames('web', 1)).toEqual(['web']);
  expect(displayNames('web', 3)).toEqual(['web-1', 'web-2', 'web-3']);
});
