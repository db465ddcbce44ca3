import { classifyAllocation, LeakTracker, type ConsumerOnProvider } from './audit';

const base: ConsumerOnProvider = { consumerUuid: 'c', providerUuid: 'rp1', instance: undefined, isMigration: false };
const inst = (vmState: string, node: string | undefined, deleted = false): ConsumerOnProvider['instance'] => ({ vmState, node: null, deleted, computeNodeUuid: node });

test.each([
  ['migration', { ...base, isMigration: true }, 'ok'],
  ['unknown consumer', base, 'unknown'],
  ['active on its node', { ...base, instance: inst('active', 'rp1') }, 'ok'],
  ['building on its node', { ...base, instance: inst('building', 'rp1') }, 'ok'],
  ['deleted instance', { ...base, instance: inst('active', 'rp1', true) }, 'leak'],
  ['error instance', { ...base, instance: inst('error', 'rp1') }, 'leak'],
  ['active elsewhere', { ...base, instance: inst('active', 'rp2') }, 'leak'],
  ['building elsewhere (retry in flight)', { ...base, instance: inst('building', 'rp2') }, 'unknown'],
] as const)('classifyAllocation: %s', (_n, c, verdict) => {
  expect(classifyAllocation(c)).toBe(verdict);
});

test('LeakTracker heals only suspects seen again after the grace period', () => {
  const t = new LeakTracker(1000);
  expect(t.pass(['a', 'b'], 0)).toEqual([]);
  expect(t.pass(['a', 'b'], 500)).toEqual([]);
  expect(t.pass(['a'], 1200)).toEqual(['a']);
  expect(t.pass(['b'], 1300)).toEqual([]); // b went away at 1200: its clock restarted
  expect(t.pass([], 5000)).toEqual([]);
});
