import type { GetAllocationCandidatesRequest } from '@cellsched/wire';
import { image, spec } from '../../../test/support/fixtures';
import type { HostAggregate } from '../host-state';
import { DEFAULT_POLICY, type SchedulerPolicy } from '../policy';
import { computeStatusFilter } from './compute-status-filter';
import { mapAzToPlacementAggregate } from './map-az-to-placement-aggregate';
import { imageTypeTrait, requireImageTypeSupport } from './require-image-type-support';
import { requireTenantAggregate } from './require-tenant-aggregate';
import type { RequestFilter, RequestFilterResult } from './types';

const AGGS: HostAggregate[] = [
  { uuid: 'agg-az1-a', name: 'a', metadata: { availability_zone: 'az1' } },
  { uuid: 'agg-az1-b', name: 'b', metadata: { availability_zone: 'az1' } },
  { uuid: 'agg-az2', name: 'c', metadata: { availability_zone: 'az2' } },
  { uuid: 'agg-t1', name: 'd', metadata: { filter_tenant_id: 'p1' } },
  { uuid: 'agg-t2', name: 'e', metadata: { filter_tenant_id2: 'p1', filter_tenant_id: 'p9' } },
  { uuid: 'agg-other', name: 'f', metadata: { owner: 'p1' } },
];

function run(
  filter: RequestFilter,
  s = spec(),
  policy: Partial<SchedulerPolicy> = {},
): { q: GetAllocationCandidatesRequest; r: RequestFilterResult } {
  const q: GetAllocationCandidatesRequest = {
    groups: [],
    groupPolicy: '',
    limit: 0,
    rootRequired: [],
    rootForbidden: [],
    sameSubtree: [],
    seed: 0,
  };
  const p = { ...DEFAULT_POLICY, ...policy };
  const r = filter.enabled(p)
    ? filter.apply(q, { spec: s, flavor: s.flavor!, image: s.image, policy: p, aggregates: AGGS })
    : { kind: 'ok' as const };
  return { q, r };
}

describe('map_az_to_placement_aggregate', () => {
  it.each([
    ['no AZ requested', '', []],
    ['AZ in two aggregates -> any of them', 'az1', ['in:agg-az1-a,agg-az1-b']],
    ['AZ in one aggregate', 'az2', ['agg-az2']],
    ['AZ no aggregate names (the default AZ)', 'nova', []],
  ])('%s', (_n, az, memberOf) => {
    const { q } = run(mapAzToPlacementAggregate, spec({ availabilityZone: az }));
    expect(q.groups[0]?.memberOf ?? []).toEqual(memberOf);
  });

  it('does nothing when query_placement_for_availability_zone is off', () => {
    const { q } = run(mapAzToPlacementAggregate, spec({ availabilityZone: 'az1' }), { queryPlacementForAvailabilityZone: false });
    expect(q.groups).toEqual([]);
  });
});

describe('require_tenant_aggregate', () => {
  const on = { limitTenantsToPlacementAggregate: true };
  it.each([
    ['project with filter_tenant_id* aggregates', 'p1', on, ['in:agg-t1,agg-t2'], 'ok'],
    ['project without aggregate, not required', 'p5', on, [], 'ok'],
    ['project without aggregate, required', 'p5', { ...on, placementAggregateRequiredForTenants: true }, [], 'no_valid_host'],
    ['disabled', 'p1', {}, [], 'ok'],
  ])('%s', (_n, project, policy, memberOf, kind) => {
    const { q, r } = run(requireTenantAggregate, spec({ projectId: project }), policy);
    expect(q.groups[0]?.memberOf ?? []).toEqual(memberOf);
    expect(r.kind).toBe(kind);
  });
});

describe('require_image_type_support', () => {
  it.each([
    ['qcow2 on', 'qcow2', true, ['COMPUTE_IMAGE_TYPE_QCOW2']],
    ['raw on', 'raw', true, ['COMPUTE_IMAGE_TYPE_RAW']],
    ['no disk format', '', true, []],
    ['off', 'qcow2', false, []],
  ])('%s', (_n, diskFormat, enabled, rootRequired) => {
    const { q } = run(requireImageTypeSupport, spec({ image: image({ diskFormat }) }), { queryPlacementForImageTypeSupport: enabled });
    expect(q.rootRequired).toEqual(rootRequired);
  });

  it('names the trait like os-traits', () => {
    expect(imageTypeTrait('vhdx')).toBe('COMPUTE_IMAGE_TYPE_VHDX');
  });
});

describe('compute_status_filter', () => {
  it.each([
    ['default policy', {}],
    ['every flag off', { queryPlacementForAvailabilityZone: false }],
  ])('always forbids COMPUTE_STATUS_DISABLED on the root (%s)', (_n, policy) => {
    expect(run(computeStatusFilter, spec(), policy).q.rootForbidden).toEqual(['COMPUTE_STATUS_DISABLED']);
  });
});
