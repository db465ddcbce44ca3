import {
  describeOrphan,
  formatResources,
  isNovaAllocation,
  judgeAllocation,
  type ConsumerFacts,
  type InstanceFact,
  type MigrationFact,
  type NodeRef,
} from './orphan-allocations';

const CELL1 = 'c1';
const NODE: NodeRef = { cellUuid: CELL1, host: 'h1', hypervisorHostname: 'h1' };
const inst = (o: Partial<InstanceFact> = {}): InstanceFact => ({
  cellUuid: CELL1,
  cellName: 'cell1',
  vmState: 'active',
  host: 'h1',
  node: 'h1',
  deleted: false,
  ...o,
});
const mig = (o: Partial<MigrationFact> = {}): MigrationFact => ({
  uuid: 'm1',
  instanceUuid: 'i1',
  status: 'migrating',
  sourceCompute: 'h1',
  sourceNode: 'h1',
  destCompute: 'h2',
  destNode: 'h2',
  ...o,
});
const facts = (o: Partial<ConsumerFacts> = {}): ConsumerFacts => ({
  instances: [],
  migration: undefined,
  instanceMigrations: [],
  buildRequest: false,
  ...o,
});

describe('judgeAllocation', () => {
  test.each<[string, NodeRef | undefined, ConsumerFacts, string | undefined]>([
    ['an ACTIVE instance on this node', NODE, facts({ instances: [inst()] }), undefined],
    ['a stopped instance on this node', NODE, facts({ instances: [inst({ vmState: 'stopped' })] }), undefined],
    ['an instance whose node is unset (host = node)', NODE, facts({ instances: [inst({ node: null })] }), undefined],
    ['nothing anywhere', NODE, facts(), 'no_consumer'],
    ['nothing anywhere, provider without compute node', undefined, facts(), 'no_consumer'],
    ['a build request (claimed, not in a cell yet)', NODE, facts({ buildRequest: true }), undefined],
    ['only a deleted row', NODE, facts({ instances: [inst({ deleted: true })] }), 'instance_deleted'],
    ["vm_state 'deleted' without deleted_at", NODE, facts({ instances: [inst({ vmState: 'deleted' })] }), 'instance_deleted'],
    [
      'a deleted row even with a build request left',
      NODE,
      facts({ instances: [inst({ deleted: true })], buildRequest: true }),
      'instance_deleted',
    ],
    ['ERROR (beyond Nova)', NODE, facts({ instances: [inst({ vmState: 'error' })] }), 'instance_error'],
    [
      'ERROR buried in cell0',
      NODE,
      facts({ instances: [inst({ cellUuid: 'c0', cellName: 'cell0', vmState: 'error', host: null, node: null })] }),
      'instance_error',
    ],
    [
      'building elsewhere (a retry moves the claim before the row)',
      NODE,
      facts({ instances: [inst({ vmState: 'building', host: 'h9', node: 'h9' })] }),
      undefined,
    ],
    ['ACTIVE on another node', NODE, facts({ instances: [inst({ host: 'h2', node: 'h2' })] }), 'not_on_node'],
    ['ACTIVE with the same host name in another cell', NODE, facts({ instances: [inst({ cellUuid: 'c2' })] }), 'not_on_node'],
    [
      'ACTIVE on no host (shelved offloaded)',
      NODE,
      facts({ instances: [inst({ vmState: 'shelved_offloaded', host: null, node: null })] }),
      'not_on_node',
    ],
    ['ACTIVE, provider without compute node', undefined, facts({ instances: [inst()] }), 'not_on_node'],
    [
      'ACTIVE elsewhere but moving from this node',
      NODE,
      facts({ instances: [inst({ host: 'h2', node: 'h2' })], instanceMigrations: [mig()] }),
      undefined,
    ],
    [
      'ACTIVE elsewhere, moving to this node',
      NODE,
      facts({
        instances: [inst({ host: 'h3', node: 'h3' })],
        instanceMigrations: [mig({ sourceCompute: 'h3', sourceNode: 'h3', destCompute: 'h1', destNode: 'h1' })],
      }),
      undefined,
    ],
    [
      'ACTIVE elsewhere, its move from here confirmed',
      NODE,
      facts({ instances: [inst({ host: 'h2', node: 'h2' })], instanceMigrations: [mig({ status: 'confirmed' })] }),
      'not_on_node',
    ],
    ['a migration in progress', NODE, facts({ migration: mig() }), undefined],
    ['a finished migration', NODE, facts({ migration: mig({ status: 'confirmed' }) }), 'migration_finished'],
    ['a failed migration', NODE, facts({ migration: mig({ status: 'error' }) }), 'migration_finished'],
    ["an evacuation 'done', its source not back yet (it holds the source)", NODE, facts({ migration: mig({ status: 'done' }) }), undefined],
    [
      'an evacuation completed (the source gave its copy up)',
      NODE,
      facts({ migration: mig({ status: 'completed' }) }),
      'migration_finished',
    ],
    [
      'ERROR after a failed move, launched, on this node (it keeps its host)',
      NODE,
      facts({ instances: [inst({ vmState: 'error', launched: true })] }),
      undefined,
    ],
    [
      'ERROR after a failed move, launched, on another node',
      NODE,
      facts({ instances: [inst({ vmState: 'error', launched: true, host: 'h2', node: 'h2' })] }),
      'not_on_node',
    ],
  ])('%s', (_what, node, f, want) => {
    expect(judgeAllocation(node, f)).toBe(want);
  });
});

test('describeOrphan: Nova sentence for its own case, the reason otherwise', () => {
  expect(describeOrphan('u1', 'no_consumer', facts())).toBe(
    'Allocations were set against consumer UUID u1 but no existing instances or active migrations are related. ',
  );
  expect(describeOrphan('u1', 'instance_error', facts({ instances: [inst({ vmState: 'error', cellName: 'cell0' })] }))).toMatch(
    /in ERROR in cell0/,
  );
  expect(describeOrphan('u1', 'not_on_node', facts({ instances: [inst({ host: 'h2', node: 'h2' })] }))).toMatch(/active on h2 in cell1/);
  expect(describeOrphan('u1', 'migration_finished', facts({ migration: mig({ status: 'reverted' }) }))).toMatch(
    /its migration is reverted/,
  );
  expect(describeOrphan('u1', 'instance_deleted', facts({ instances: [inst({ deleted: true, cellName: 'cell2' })] }))).toMatch(
    /deleted \(cell2\)/,
  );
});

test("isNovaAllocation: any of Nova's classes, as Nova's audit", () => {
  expect(isNovaAllocation({ VCPU: 1 })).toBe(true);
  expect(isNovaAllocation({ CUSTOM_GPU: 1, MEMORY_MB: 512 })).toBe(true);
  expect(isNovaAllocation({ CUSTOM_GPU: 1 })).toBe(false);
});

test('formatResources prints a Python dict, sorted', () => {
  expect(formatResources({ VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 })).toBe("{'DISK_GB': 1, 'MEMORY_MB': 512, 'VCPU': 1}");
  expect(formatResources({})).toBe('{}');
});
