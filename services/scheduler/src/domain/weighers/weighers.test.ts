import type { HostWeigher } from './types';
import type { Destination } from '@cellsched/wire';
import type { GroupState } from '../context';
import { ctx, group, hostState, spec, type Usage } from '../../../test/support/fixtures';
import type { ComputeNodeRecord } from '../host-state';
import { buildFailureWeigher } from './build-failure-weigher';
import { cpuWeigher } from './cpu-weigher';
import { crossCellWeigher } from './cross-cell-weigher';
import { diskWeigher } from './disk-weigher';
import { ioOpsWeigher } from './io-ops-weigher';
import { ramWeigher } from './ram-weigher';
import { serverGroupSoftAffinityWeigher } from './server-group-soft-affinity-weigher';
import { serverGroupSoftAntiAffinityWeigher } from './server-group-soft-anti-affinity-weigher';

describe('raw weigher scores', () => {
  it.each<[HostWeigher, Partial<ComputeNodeRecord>, Usage, number]>([
    [ramWeigher, {}, { MEMORY_MB: [8192, 1024] }, 7168],
    [ramWeigher, {}, {}, 0],
    [cpuWeigher, {}, { VCPU: [64, 10] }, 54],
    [diskWeigher, {}, { DISK_GB: [500, 120] }, 380],
    [ioOpsWeigher, { numIoOps: 3 }, {}, 3],
    [buildFailureWeigher, { failedBuilds: 4 }, {}, -4],
    [buildFailureWeigher, { failedBuilds: 0 }, {}, -0],
  ])('%s', (weigher, rec, usage, expected) => {
    expect(weigher.weigh(hostState(rec, usage), ctx())).toBe(expected);
  });

  it.each<[string, HostWeigher, GroupState | undefined, number]>([
    ['soft-affinity counts members', serverGroupSoftAffinityWeigher, group('soft-affinity', { h1: 2 }), 2],
    ['soft-affinity ignores other policies', serverGroupSoftAffinityWeigher, group('soft-anti-affinity', { h1: 2 }), 0],
    ['soft-affinity without group', serverGroupSoftAffinityWeigher, undefined, 0],
    ['soft-anti-affinity is minus the members', serverGroupSoftAntiAffinityWeigher, group('soft-anti-affinity', { h1: 3 }), -3],
    ['soft-anti-affinity ignores hard policies', serverGroupSoftAntiAffinityWeigher, group('anti-affinity', { h1: 3 }), 0],
  ])('%s', (_n, weigher, g, expected) => {
    expect(weigher.weigh(hostState({ host: 'h1' }), ctx({ group: g }))).toBe(expected);
  });

  it.each<[HostWeigher, string, number]>([
    [ramWeigher, 'ram_weight_multiplier', 1],
    [cpuWeigher, 'cpu_weight_multiplier', 1],
    [diskWeigher, 'disk_weight_multiplier', 1],
    [ioOpsWeigher, 'io_ops_weight_multiplier', -1],
    [buildFailureWeigher, 'build_failure_weight_multiplier', 1000000],
    [serverGroupSoftAffinityWeigher, 'soft_affinity_weight_multiplier', 1],
    [serverGroupSoftAntiAffinityWeigher, 'soft_anti_affinity_weight_multiplier', 1],
    [crossCellWeigher, 'cross_cell_move_weight_multiplier', 1000000],
  ])('%s reads Nova option %s, default %d', (weigher, option, multiplier) => {
    expect([weigher.multiplierOption, weigher.defaultMultiplier]).toEqual([option, multiplier]);
  });
});

describe('CrossCellWeigher', () => {
  const dest = (cellUuid: string, allowCrossCellMove: boolean): Destination => ({
    host: '',
    node: '',
    cellUuid,
    aggregates: [],
    allowCrossCellMove,
  });
  it.each<[string, Destination | undefined, string, number]>([
    ["cross-cell move, host in the instance's cell", dest('cell-1', true), 'cell-1', 1],
    ['cross-cell move, host in another cell', dest('cell-1', true), 'cell-2', -1],
    ['move kept in its cell (the cell is a restriction)', dest('cell-1', false), 'cell-1', 0],
    ['cross-cell allowed but no cell named', dest('', true), 'cell-2', 0],
    ['a boot (no requested destination)', undefined, 'cell-1', 0],
  ])('%s', (_n, requestedDestination, hostCell, expected) => {
    const c = ctx({ spec: spec({ requestedDestination }) });
    expect(crossCellWeigher.weigh(hostState({ cellUuid: hostCell }), c)).toBe(expected);
  });
});
