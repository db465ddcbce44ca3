import { classifyAllocation, LeakTracker, type ConsumerOnProvider } from './audit';

const base: ConsumerOnProvider = { consumerUuid: 'c', providerUuid: 'rp1', instance: undefined, isMigration: false };
type Inst = NonNullable<ConsumerOnProvider['instance']>;
const inst = (vmState: string, node: string | undefined, deleted = false): Inst => ({
  vmState,
  node: null,
  deleted,
  computeNodeUuid: node,
});

test.each([
  ['migration', { ...base, isMigration: true }, 'ok'],
  ['unknown consumer', base, 'unknown'],
  ['active on its node', { ...base, instance: inst('active', 'rp1') }, 'ok'],
  ['building on its node', { ...base, instance: inst('building', 'rp1') }, 'ok'],
  ['deleted instance', { ...base, instance: inst('active', 'rp1', true) }, 'leak'],
  ['error instance', { ...base, instance: inst('error', 'rp1') }, 'leak'],
  ['active elsewhere', { ...base, instance: inst('active', 'rp2') }, 'leak'],
  ['building elsewhere (retry in flight)', { ...base, instance: inst('building', 'rp2') }, 'unknown'],
  ['migration in progress', { ...base, isMigration: true, migrationStatus: 'migrating' }, 'ok'],
  ['evacuation done, source not cleaned yet', { ...base, isMigration: true, migrationStatus: 'done' }, 'ok'],
  ['migration confirmed', { ...base, isMigration: true, migrationStatus: 'confirmed' }, 'leak'],
  ['migration failed', { ...base, isMigration: true, migrationStatus: 'error' }, 'leak'],
  ['moving: on the destination of its move', { ...base, instance: { ...inst('active', 'rp2'), moveProviders: ['rp2', 'rp1'] } }, 'ok'],
  ['moving: elsewhere', { ...base, instance: { ...inst('active', 'rp2'), moveProviders: ['rp2', 'rp3'] } }, 'leak'],
  ['ERROR after a failed move, on its own node', { ...base, instance: { ...inst('error', 'rp1'), failedMove: true } }, 'ok'],
  ['ERROR after a failed move, elsewhere', { ...base, instance: { ...inst('error', 'rp2'), failedMove: true } }, 'leak'],
  ['shelved offloaded (an unshelve being scheduled)', { ...base, instance: inst('shelved_offloaded', undefined) }, 'unknown'],
  ['stopped on its node', { ...base, instance: inst('stopped', 'rp1') }, 'ok'],
] as [string, ConsumerOnProvider, string][])('classifyAllocation: %s', (_n, c, verdict) => {
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
