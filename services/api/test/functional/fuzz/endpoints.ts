// Every body the compute API reads, each with a body it accepts and mutations that each make
// any body bad (a 4xx). To fuzz a new body (issue 13's server actions included), add an entry.
import fc from 'fast-check';
import { addUnknownAt, nastyString, removeAt, setAt, wrongType, type Mutation } from './junk';

/** What the mutations and paths refer to (made by the test before fuzzing). */
export interface Fixtures {
  readonly image: string;
  readonly serviceUuid: string;
  readonly serviceHost: string;
  readonly serverUuid: string;
  /** An ACTIVE server in a cell (on serviceHost, launched) for each action fuzzed, by action name. */
  readonly actionServers: Readonly<Record<string, string>>;
  /** The integer id of a host aggregate made for the fuzzing. */
  readonly aggregateId: number;
}

/** One body the API reads. */
export interface BodyEndpoint {
  readonly name: string;
  readonly method: 'POST' | 'PUT';
  readonly path: (fx: Fixtures) => string;
  readonly version: string;
  /** Admin-only: a member gets 403 before the body is read. */
  readonly adminOnly: boolean;
  /** A body this endpoint accepts (the test checks it: 2xx): the base of the mutations. */
  readonly valid: (fx: Fixtures) => Record<string, unknown>;
  /** Each of these makes any body bad wherever the others leave it (so one or more applied is still bad). */
  readonly breakers: readonly fc.Arbitrary<Mutation>[];
}

/** Names Nova's `name` format refuses (plus too short and too long). */
const badName = fc.oneof(
  wrongType('string'),
  fc.constantFrom('', ' lead', 'trail ', '\u00a0x', 'a\u0007b', 'a\nb', 'x\u200b', 'a\u2028b', '\u0085', 'x'.repeat(256)),
);
/** Zones Nova's `az_name` (or null) refuses: a ':', whitespace at an edge, not printable, too short or long. */
const badZone = fc.oneof(fc.constantFrom('', ' a', 'a ', 'a:b', 'a\u0007b', '\u2028', 'x'.repeat(256)), wrongType('string', 'null'));
/** Strings that are not a dashed uuid. */
const notUuid = fc.oneof(
  fc.constantFrom('', 'abc', '155d900f-4e14-4e4c-a73d-069cbf4541e', '155d900f4e144e4ca73d069cbf4541e6x'),
  fc.string({ maxLength: 20 }),
);
/** What Nova's `positive_integer` refuses. */
const notPositiveInt = fc.oneof(fc.constantFrom(0, -1, 1.5, '', '0', '1.0', ' 1', 'x', '-3'), wrongType('string', 'integer'));
/** What Nova's flavor disk, ephemeral and swap refuse. */
const notNonNegativeInt = fc.oneof(
  fc.constantFrom(-1, 1.5, '', '-1', '1.0', ' 1', 'x', 2 ** 31, '2147483648'),
  wrongType('string', 'integer'),
);
/** A server count refused: not a positive integer, or more than one request may create. */
const badCount = fc.oneof(notPositiveInt, fc.constantFrom(1001, '1001', 10 ** 12, '99999999999999999999'));
/** Not one of Nova's boolean values. */
const notBoolean = fc.oneof(fc.constantFrom('maybe', 'y', 'n', '', 'TRUE ', 2), wrongType('boolean', 'string'));
const unknownUuid = fc.uuid().filter((u) => u !== '155d900f-4e14-4e4c-a73d-069cbf4541e6');

function createBreakers(v237: boolean, v219: boolean): fc.Arbitrary<Mutation>[] {
  const s = (k: string): string[] => ['server', k];
  const list = [
    removeAt(['server']),
    setAt(['server'], wrongType('object')),
    removeAt(s('name')),
    setAt(s('name'), badName),
    removeAt(s('flavorRef')),
    setAt(
      s('flavorRef'),
      fc.oneof(fc.constantFrom('', '999999', 'nope', 1.5, -1), fc.integer({ min: 1_000_000 }), wrongType('string', 'integer')),
    ),
    removeAt(s('imageRef')),
    setAt(s('imageRef'), fc.oneof(notUuid, unknownUuid, wrongType('string'))),
    setAt(s('min_count'), badCount),
    setAt(s('max_count'), badCount),
    fc
      .tuple(fc.integer({ min: 2, max: 9 }), fc.integer({ min: 1, max: 8 }))
      .filter(([a, b]) => a > b)
      .chain(([a, b]) =>
        setAt(s('min_count'), fc.constant(a)).map((m) => (body: Record<string, unknown>) => {
          m(body);
          (body.server as Record<string, unknown>).max_count = b;
          return body;
        }),
      ),
    setAt(s('availability_zone'), fc.oneof(badName, fc.constantFrom('mars', 'a:b', 'nova '), wrongType('string'))),
    setAt(s('return_reservation_id'), notBoolean),
    setAt(
      s('networks'),
      fc.oneof(
        fc.constantFrom('bogus', 'None', 'AUTO', ''),
        fc.array(fc.jsonValue(), { minLength: 1, maxLength: 2 }),
        wrongType('string', 'array'),
      ),
    ),
    setAt(['os:scheduler_hints'], wrongType('object')),
    setAt(['os:scheduler_hints', 'group'], fc.oneof(notUuid, unknownUuid, wrongType('string', 'array'))),
    setAt(['os:scheduler_hints', 'different_host'], fc.oneof(notUuid, wrongType('string', 'array'))),
    setAt(['OS-SCH-HNT:scheduler_hints', 'build_near_host_ip'], fc.oneof(fc.constantFrom('300.1.1.1', 'host', ''), wrongType('string'))),
    addUnknownAt(
      ['server'],
      [
        ...['name', 'imageRef', 'flavorRef', 'availability_zone', 'min_count', 'max_count', 'return_reservation_id', 'networks'],
        ...[
          'metadata',
          'security_groups',
          'key_name',
          'user_data',
          'config_drive',
          'adminPass',
          'OS-DCF:diskConfig',
          'description',
          'trusted_image_certificates',
        ],
      ],
    ),
    addUnknownAt([], ['server', 'os:scheduler_hints', 'OS-SCH-HNT:scheduler_hints']),
    setAt(
      s('metadata'),
      fc.oneof(
        wrongType('object'),
        fc.constantFrom({ 'a/b': 'x' }, { '': 'x' }, { k: 1 }, { k: null }, { k: 'x'.repeat(256) }, { ['k'.repeat(256)]: 'x' }),
      ),
    ),
    setAt(
      s('security_groups'),
      fc.oneof(wrongType('array'), fc.constantFrom([1], [{ name: '' }], [{ name: 'web' }], [{ id: 'x' }], [null])),
    ),
    setAt(s('key_name'), fc.oneof(nastyString, wrongType('string'))), // no key pair exists here: any key_name is bad
    setAt(s('user_data'), fc.oneof(fc.constantFrom('not base64!', 'abc', '===='), fc.constant('QUFB'.repeat(16_384)), wrongType('string'))),
    setAt(s('config_drive'), notBoolean),
    setAt(s('adminPass'), wrongType('string')),
    setAt(s('OS-DCF:diskConfig'), fc.oneof(fc.constantFrom('auto', 'manual', '', 'AUTO '), wrongType('string'))),
    setAt(s('trusted_image_certificates'), fc.oneof(fc.constantFrom(['a'], [], 'x'), wrongType('null'))),
  ];
  if (v237) list.push(removeAt(s('networks')));
  else list.push(setAt(s('networks'), fc.constantFrom('none', 'auto')));
  list.push(
    setAt(
      s('description'),
      v219 ? fc.oneof(fc.constantFrom('x'.repeat(256), 'a\u0000', 'a\nb', 'bell\u0007'), wrongType('string', 'null')) : fc.jsonValue(),
    ),
  );
  return list;
}

function groupBreakers(v264: boolean): fc.Arbitrary<Mutation>[] {
  const g = (k: string): string[] => ['server_group', k];
  const common = [
    removeAt(['server_group']),
    setAt(['server_group'], wrongType('object')),
    removeAt(g('name')),
    setAt(g('name'), badName),
    addUnknownAt(['server_group'], ['name', 'policy', 'rules', 'policies']),
    addUnknownAt([], ['server_group']),
  ];
  const badPolicy = fc.oneof(fc.constantFrom('', 'Affinity', 'anti_affinity', 'affinity '), wrongType('string'));
  if (!v264) {
    return [
      ...common,
      removeAt(g('policies')),
      setAt(g('policy'), fc.constantFrom('affinity')),
      setAt(g('rules'), fc.constant({})),
      setAt(
        g('policies'),
        fc.oneof(
          wrongType('array'),
          fc.constantFrom([], ['affinity', 'anti-affinity'], ['soft-affinity'], [1]),
          badPolicy.map((p) => [p]),
        ),
      ),
    ];
  }
  return [
    ...common,
    removeAt(g('policy')),
    setAt(g('policy'), badPolicy),
    setAt(g('policies'), fc.constant(['affinity'])),
    setAt(g('rules'), wrongType('object')),
    setAt([...g('rules'), 'max_server_per_host'], notPositiveInt),
    addUnknownAt(g('rules'), ['max_server_per_host']),
    setAt(g('policy'), fc.constantFrom('affinity', 'soft-affinity')).map((m) => (b: Record<string, unknown>) => {
      m(b);
      (b.server_group as Record<string, unknown>).rules = { max_server_per_host: 2 };
      return b;
    }),
  ];
}

const serviceReason = fc.oneof(fc.constantFrom('', 'x'.repeat(256)), wrongType('string'));

/** Every body the compute API reads today, at the microversions that change its schema. */
export const BODY_ENDPOINTS: readonly BodyEndpoint[] = [
  {
    name: 'POST /servers @2.64',
    method: 'POST',
    path: () => '/v2.1/servers',
    version: '2.64',
    adminOnly: false,
    valid: (fx) => ({ server: { name: 'fuzz-vm', imageRef: fx.image, flavorRef: '1', networks: 'none' } }),
    breakers: createBreakers(true, true),
  },
  {
    name: 'POST /servers @2.1',
    method: 'POST',
    path: () => '/v2.1/servers',
    version: '2.1',
    adminOnly: false,
    valid: (fx) => ({ server: { name: 'fuzz-vm', imageRef: fx.image, flavorRef: '1' } }),
    breakers: createBreakers(false, false),
  },
  {
    name: 'POST /os-server-groups @2.64',
    method: 'POST',
    path: () => '/v2.1/os-server-groups',
    version: '2.64',
    adminOnly: false,
    valid: () => ({ server_group: { name: 'fuzz-g', policy: 'anti-affinity', rules: { max_server_per_host: 2 } } }),
    breakers: groupBreakers(true),
  },
  {
    name: 'POST /os-server-groups @2.1',
    method: 'POST',
    path: () => '/v2.1/os-server-groups',
    version: '2.1',
    adminOnly: false,
    valid: () => ({ server_group: { name: 'fuzz-g', policies: ['affinity'] } }),
    breakers: groupBreakers(false),
  },
  {
    name: 'PUT /os-services/{id} @2.53',
    method: 'PUT',
    path: (fx) => `/v2.1/os-services/${fx.serviceUuid}`,
    version: '2.53',
    adminOnly: true,
    valid: () => ({ status: 'disabled', disabled_reason: 'fuzz' }),
    breakers: [
      removeAt(['status']),
      setAt(['status'], fc.oneof(fc.constantFrom('Enabled', 'up', ''), wrongType('string'))),
      setAt(['disabled_reason'], serviceReason),
      setAt(['forced_down'], notBoolean),
      addUnknownAt([], ['status', 'disabled_reason', 'forced_down']),
      setAt(['status'], fc.constant('enabled')).map((m) => (b: Record<string, unknown>) => {
        m(b);
        b.disabled_reason = 'why';
        return b;
      }),
    ],
  },
  {
    name: 'PUT /os-services/disable @2.1',
    method: 'PUT',
    path: () => '/v2.1/os-services/disable',
    version: '2.1',
    adminOnly: true,
    valid: (fx) => ({ host: fx.serviceHost, binary: 'nova-compute' }),
    breakers: [
      removeAt(['host']),
      removeAt(['binary']),
      setAt(['host'], fc.oneof(fc.constantFrom('', 'a b', 'x/y', 'x'.repeat(256), 'no-such-host'), wrongType('string'))),
      setAt(['binary'], fc.oneof(fc.constantFrom('', 'x'.repeat(256), 'nova-nothing'), wrongType('string'))),
      setAt(['disabled_reason'], serviceReason),
      addUnknownAt([], ['host', 'binary', 'disabled_reason']),
    ],
  },
  {
    name: 'POST /flavors/1/os-extra_specs',
    method: 'POST',
    path: () => '/v2.1/flavors/1/os-extra_specs',
    version: '2.1',
    adminOnly: true,
    valid: () => ({ extra_specs: { 'hw:cpu_policy': 'dedicated', 'quota:cpu_shares': 1024 } }),
    breakers: [
      removeAt(['extra_specs']),
      setAt(['extra_specs'], wrongType('object')),
      addUnknownAt([], ['extra_specs']),
      setAt(['extra_specs', 'hw:cpu_policy'], fc.oneof(fc.constant('x'.repeat(256)), wrongType('string', 'number'))),
      fc
        .oneof(
          fc.constantFrom('', 'a/b', 'é', 'k\u0000', 'x'.repeat(256), 'a\nb'),
          fc.string({ minLength: 1, maxLength: 5 }).map((k) => `${k}/`),
        )
        .chain((k) => setAt(['extra_specs', k], fc.constant('v'))),
    ],
  },
  {
    name: 'POST /flavors @2.55',
    method: 'POST',
    path: () => '/v2.1/flavors',
    version: '2.55',
    adminOnly: true,
    valid: () => ({
      flavor: {
        name: 'fuzz-flavor',
        id: 'fuzz-f',
        ram: 512,
        vcpus: 1,
        disk: 1,
        'OS-FLV-EXT-DATA:ephemeral': 0,
        swap: 0,
        rxtx_factor: 1.5,
        'os-flavor-access:is_public': 'false',
        description: 'fuzzed',
      },
    }),
    breakers: [
      removeAt(['flavor']),
      setAt(['flavor'], wrongType('object')),
      addUnknownAt([], ['flavor']),
      ...['name', 'ram', 'vcpus', 'disk'].map((k) => removeAt(['flavor', k])),
      setAt(['flavor', 'name'], badName),
      setAt(['flavor', 'ram'], notPositiveInt),
      setAt(['flavor', 'vcpus'], fc.oneof(notPositiveInt, fc.constantFrom(2 ** 31, '2147483648'))),
      setAt(['flavor', 'disk'], notNonNegativeInt),
      setAt(['flavor', 'OS-FLV-EXT-DATA:ephemeral'], notNonNegativeInt),
      setAt(['flavor', 'swap'], notNonNegativeInt),
      setAt(
        ['flavor', 'id'],
        fc.oneof(fc.constantFrom('', ' a', 'a ', 'a/b', 'é', 'x'.repeat(256)), wrongType('string', 'number', 'null')),
      ),
      setAt(['flavor', 'rxtx_factor'], fc.oneof(fc.constantFrom(0, -1, '0', '0.0', '-1', '1e3', 'x', '1.'), wrongType('number', 'string'))),
      setAt(['flavor', 'os-flavor-access:is_public'], notBoolean),
      setAt(['flavor', 'description'], fc.oneof(fc.constantFrom('a\u0007b', 'x'.repeat(65536)), wrongType('string', 'null'))),
      addUnknownAt(
        ['flavor'],
        [
          'name',
          'id',
          'ram',
          'vcpus',
          'disk',
          'OS-FLV-EXT-DATA:ephemeral',
          'swap',
          'rxtx_factor',
          'os-flavor-access:is_public',
          'description',
        ],
      ),
    ],
  },
  {
    name: 'PUT /flavors/1 @2.55',
    method: 'PUT',
    path: () => '/v2.1/flavors/1',
    version: '2.55',
    adminOnly: true,
    valid: () => ({ flavor: { description: 'tiny' } }),
    breakers: [
      removeAt(['flavor']),
      setAt(['flavor'], wrongType('object')),
      addUnknownAt([], ['flavor']),
      removeAt(['flavor', 'description']),
      setAt(['flavor', 'description'], fc.oneof(fc.constantFrom('a\nb', '\u2028'), wrongType('string', 'null'))),
      addUnknownAt(['flavor'], ['description']),
    ],
  },
  {
    name: 'POST /os-aggregates',
    method: 'POST',
    path: () => '/v2.1/os-aggregates',
    version: '2.41',
    adminOnly: true,
    valid: () => ({ aggregate: { name: 'fuzz-agg', availability_zone: 'fuzz-az' } }),
    breakers: [
      removeAt(['aggregate']),
      setAt(['aggregate'], wrongType('object')),
      addUnknownAt([], ['aggregate']),
      removeAt(['aggregate', 'name']),
      setAt(['aggregate', 'name'], badName),
      setAt(['aggregate', 'availability_zone'], badZone),
      addUnknownAt(['aggregate'], ['name', 'availability_zone']),
    ],
  },
  {
    name: 'PUT /os-aggregates/{id}',
    method: 'PUT',
    path: (fx) => `/v2.1/os-aggregates/${fx.aggregateId}`,
    version: '2.41',
    adminOnly: true,
    valid: () => ({ aggregate: { name: ' fuzz-renamed ' } }),
    breakers: [
      removeAt(['aggregate']),
      setAt(['aggregate'], wrongType('object')),
      addUnknownAt([], ['aggregate']),
      removeAt(['aggregate', 'name']),
      setAt(
        ['aggregate', 'name'],
        fc.oneof(fc.constantFrom('', '   ', '\u00a0', 'a\u0007b', 'a\u2028b', 'x'.repeat(256)), wrongType('string')),
      ),
      setAt(['aggregate', 'availability_zone'], badZone),
      addUnknownAt(['aggregate'], ['name', 'availability_zone']),
    ],
  },
  {
    name: 'PUT /flavors/1/os-extra_specs/hw:cpu_policy',
    method: 'PUT',
    path: () => '/v2.1/flavors/1/os-extra_specs/hw:cpu_policy',
    version: '2.1',
    adminOnly: true,
    valid: () => ({ 'hw:cpu_policy': 'shared' }),
    breakers: [
      removeAt(['hw:cpu_policy']),
      addUnknownAt([], ['hw:cpu_policy']),
      setAt(['hw:cpu_policy'], fc.oneof(fc.constant('x'.repeat(256)), wrongType('string', 'number'))),
    ],
  },
];

const actionPath =
  (name: string) =>
  (fx: Fixtures): string =>
    `/v2.1/servers/${fx.actionServers[name] ?? fx.serverUuid}/action`;

/**
 * Server actions to fuzz, by name (`POST /servers/{id}/action` with `{"<name>": ...}`); each has its
 * own server (an accepted action holds it). Only the caller's own actions: an admin-only action's
 * 403 comes after the dispatch's 400s, which the any-request property below does not model.
 */
export const ACTION_ENDPOINTS: readonly BodyEndpoint[] = [
  {
    name: 'reboot',
    method: 'POST',
    path: actionPath('reboot'),
    version: '2.60',
    adminOnly: false,
    valid: () => ({ reboot: { type: 'HARD' } }),
    breakers: [
      removeAt(['reboot']),
      setAt(['reboot'], wrongType('object')),
      removeAt(['reboot', 'type']),
      setAt(['reboot', 'type'], fc.oneof(fc.constantFrom('', 'HArd', 'reboot', 'HARD '), wrongType('string'))),
      addUnknownAt(['reboot'], ['type']),
    ],
  },
  {
    name: 'resize',
    method: 'POST',
    path: actionPath('resize'),
    version: '2.60',
    adminOnly: false,
    valid: () => ({ resize: { flavorRef: '3' } }),
    breakers: [
      removeAt(['resize']),
      setAt(['resize'], wrongType('object')),
      removeAt(['resize', 'flavorRef']),
      setAt(['resize', 'flavorRef'], fc.oneof(fc.constantFrom('', '999999', 'nope', '2', 1.5), wrongType('string', 'integer'))),
      setAt(['resize', 'OS-DCF:diskConfig'], fc.oneof(fc.constantFrom('auto', ''), wrongType('string'))),
      addUnknownAt(['resize'], ['flavorRef', 'OS-DCF:diskConfig']),
    ],
  },
  {
    name: 'rebuild',
    method: 'POST',
    path: actionPath('rebuild'),
    version: '2.60',
    adminOnly: false,
    valid: (fx) => ({ rebuild: { imageRef: fx.image, name: 'fuzz-rebuilt' } }),
    breakers: [
      removeAt(['rebuild']),
      setAt(['rebuild'], wrongType('object')),
      removeAt(['rebuild', 'imageRef']),
      setAt(['rebuild', 'imageRef'], fc.oneof(notUuid, unknownUuid, wrongType('string'))),
      setAt(['rebuild', 'name'], badName),
      setAt(['rebuild', 'key_name'], fc.oneof(nastyString, wrongType('string', 'null'))),
      setAt(['rebuild', 'user_data'], fc.oneof(fc.constantFrom('not base64!', 'abc'), wrongType('string', 'null'))),
      setAt(['rebuild', 'preserve_ephemeral'], notBoolean),
      setAt(['rebuild', 'personality'], fc.constant([])),
      addUnknownAt(
        ['rebuild'],
        [
          'imageRef',
          'name',
          'adminPass',
          'metadata',
          'preserve_ephemeral',
          'OS-DCF:diskConfig',
          'accessIPv4',
          'accessIPv6',
          'description',
          'key_name',
          'user_data',
        ],
      ),
    ],
  },
];

/** The action route itself, for bodies that are not any action's. */
export const ACTION_ROUTE: BodyEndpoint = {
  name: 'POST /servers/{id}/action',
  method: 'POST',
  path: (fx) => `/v2.1/servers/${fx.serverUuid}/action`,
  version: '2.64',
  adminOnly: false,
  valid: () => ({}),
  breakers: [],
};
