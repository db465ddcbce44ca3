// The chaos suite's own pure pieces (the suite itself runs against real processes: pnpm chaos).
import { parseAuditLog } from './audit-check';
import { Ledger } from './context';
import { groupViolations, type ApiGroup, type HostedServer } from './group-invariant';
import { seededRng } from './rng';
import { flavorResources, parseDuration, parseSocketOwners, scenarioSeed, soakOrder } from './util';

describe('seeded PRNG', () => {
  const draws = (seed: number, n = 20): number[] => {
    const r = seededRng(seed);
    return Array.from({ length: n }, () => r.next());
  };

  test('the same seed gives the same stream, another seed another', () => {
    expect(draws(42)).toEqual(draws(42));
    expect(draws(42)).not.toEqual(draws(43));
    for (const x of draws(7, 1000)) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });

  test('int stays in [min, max] and reaches both ends', () => {
    const r = seededRng(1);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = r.int(3, 7);
      expect(v).toBeGreaterThanOrEqual(3);
      expect(v).toBeLessThanOrEqual(7);
      seen.add(v);
    }
    expect([...seen].sort()).toEqual([3, 4, 5, 6, 7]);
  });

  test('shuffle is a permutation, pick refuses an empty list, fork is deterministic', () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const shuffled = seededRng(9).shuffle([...items]);
    expect(shuffled).not.toEqual(items);
    expect([...shuffled].sort((a, b) => a - b)).toEqual(items);
    expect(() => seededRng(1).pick([])).toThrow(/empty/);
    expect(seededRng(5).fork().next()).toBe(seededRng(5).fork().next());
  });
});

test('scenario seeds depend on the run seed, the name and the iteration', () => {
  const s = scenarioSeed(1122, 'schedulers-fill-cloud', 0);
  expect(scenarioSeed(1122, 'schedulers-fill-cloud', 0)).toBe(s);
  expect(
    new Set([
      s,
      scenarioSeed(1123, 'schedulers-fill-cloud', 0),
      scenarioSeed(1122, 'deletes-racing-builds', 0),
      scenarioSeed(1122, 'schedulers-fill-cloud', 1),
    ]).size,
  ).toBe(4);
  expect(Number.isInteger(s) && s >= 0 && s < 2 ** 32).toBe(true);
});

test('durations', () => {
  expect(parseDuration('30m')).toBe(1_800_000);
  expect(parseDuration('90s')).toBe(90_000);
  expect(parseDuration('1h')).toBe(3_600_000);
  expect(parseDuration('250ms')).toBe(250);
  expect(parseDuration('45')).toBe(45_000);
  expect(() => parseDuration('soon')).toThrow(/--duration/);
  expect(() => parseDuration('0s')).toThrow(/positive/);
});

test('socket owners from ss output: (server port, client port) to pid, other servers ignored', () => {
  const out = [
    '0      0      127.0.0.1:44174 127.0.0.1:5672 users:(("node",pid=21538,fd=18))',
    '0      0      127.0.0.1:51000 127.0.0.1:5432 users:(("node",pid=777,fd=21))',
    '0      0      127.0.0.1:52000 127.0.0.1:8080 users:(("node",pid=888,fd=3))',
    '0      0      127.0.0.1:53000 127.0.0.1:5432 ',
    '0      0      127.0.0.1:44174 127.0.0.1:5432 users:(("node",pid=999,fd=7))',
  ].join('\n');
  expect([...parseSocketOwners(out)]).toEqual([
    ['5672:44174', 21538],
    ['5432:51000', 777],
    ['5432:44174', 999],
  ]);
});

test('flavor resources as placement holds them', () => {
  expect(flavorResources({ vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0 })).toEqual({ VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 });
  expect(flavorResources({ vcpus: 2, memoryMb: 2048, rootGb: 20, ephemeralGb: 5, swap: 1536 })).toEqual({
    VCPU: 2,
    MEMORY_MB: 2048,
    DISK_GB: 27,
  });
  expect(flavorResources({ vcpus: 1, memoryMb: 64, rootGb: 0 })).toEqual({ VCPU: 1, MEMORY_MB: 64 });
});

test('ledger: what must exist and what must be gone', () => {
  const l = new Ledger();
  for (const id of ['a', 'b', 'c', 'd']) l.accept(id);
  l.deleted('b', 204);
  l.deleted('c', 0); // connection error: the delete may not have happened, so c must still exist
  l.deleted('d', 404);
  l.deleted('zz', 204); // never accepted: ignored
  l.refuse(500);
  l.refuse(500);
  l.refuse(0);
  expect(l.liveIds().sort()).toEqual(['a', 'c']);
  expect(l.deletedIds().sort()).toEqual(['b', 'd']);
  expect(l.refused).toEqual({ 500: 2, 0: 1 });
});

test("a cell conductor's audit passes, failures and heals are read from its log lines", () => {
  const lines = [
    '{"level":30,"time":"2026-01-01T00:00:01.000Z","msg":"allocation audit","healed":[]}',
    'not json: allocation audit',
    '{"level":50,"time":"2026-01-01T00:00:02.000Z","msg":"allocation audit failed","err":{"code":"placement_client.placement.unreachable","message":"placement at http://127.0.0.1:8778 is unreachable"}}',
    '{"level":40,"time":"2026-01-01T00:00:03.000Z","msg":"allocation audit","healed":[{"consumerUuid":"c1"}]}',
    '{"level":40,"msg":"allocation audit hit an unavailable dependency, retrying"}',
    '{"level":30,"msg":"build succeeded"}',
  ];
  expect(parseAuditLog('cell-conductor-cell1', lines)).toEqual({
    service: 'cell-conductor-cell1',
    passes: 2,
    lastPassAt: Date.parse('2026-01-01T00:00:03.000Z'),
    failures: ['placement_client.placement.unreachable placement at http://127.0.0.1:8778 is unreachable'],
    healed: [{ consumerUuid: 'c1' }],
  });
});

test('server groups: anti-affinity counts ACTIVE members per host against max_server_per_host, affinity wants one host, soft-* and non-ACTIVE are ignored', () => {
  const s = (id: string, host: string | null, status = 'ACTIVE'): HostedServer => ({ id, status, 'OS-EXT-SRV-ATTR:host': host });
  const servers = [s('a', 'h1'), s('b', 'h1'), s('c', 'h2'), s('d', 'h1', 'ERROR'), s('e', null, 'ERROR')];
  const g = (id: string, policy: string, members: string[], max?: number): ApiGroup => ({
    id,
    name: id,
    policy,
    rules: max === undefined ? {} : { max_server_per_host: max },
    members,
  });
  expect(
    groupViolations(
      [
        g('anti1', 'anti-affinity', ['a', 'b', 'c']),
        g('anti2', 'anti-affinity', ['a', 'b', 'c'], 2),
        g('anti-err', 'anti-affinity', ['a', 'd', 'e', 'gone']),
        g('aff', 'affinity', ['a', 'c']),
        g('aff-ok', 'affinity', ['a', 'b', 'd']),
        g('soft', 'soft-anti-affinity', ['a', 'b']),
      ],
      servers,
    ),
  ).toEqual([
    'anti-affinity group anti1 (anti1): 2 ACTIVE members on h1 (at most 1): a, b',
    'affinity group aff (aff): ACTIVE members on 2 hosts: h1: a; h2: c',
  ]);
});

test('a soak interleaves the move scenarios with the build ones, each in its order', () => {
  const s = (name: string, moves?: boolean): { name: string; moves?: boolean } => ({ name, ...(moves === undefined ? {} : { moves }) });
  const order = soakOrder([s('b1'), s('b2'), s('b3', false), s('m1', true), s('b4'), s('m2', true)]).map((x) => x.name);
  expect(order).toEqual(['b1', 'm1', 'b2', 'm2', 'b3', 'b4']);
  expect(soakOrder([s('m1', true), s('m2', true)]).map((x) => x.name)).toEqual(['m1', 'm2']);
});
