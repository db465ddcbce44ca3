import { loadConfig } from '@cellsched/config';
import { policyFromConfig, schedulerConfigSchema } from './config';
import { DEFAULT_POLICY } from './domain/policy';
import { policyProblems } from './domain/select-destinations';

/** The two options every scheduler must be given (where the API DB is, its role on the cells). */
const REQUIRED = { CELLSCHED_API_DB_URL: 'postgres://sched:pw@127.0.0.1/api', CELLSCHED_SCHEDULER_CELL_DB_USER: 'sched' };
const load = (env: Record<string, string>, argv: string[] = []) =>
  loadConfig(schedulerConfigSchema, { env: { ...REQUIRED, ...env }, argv, file: false });

test("defaults give Nova's policy (no multiplier set: each weigher keeps its own default), plus a host sample of 50", () => {
  expect(policyFromConfig(load({}))).toEqual({
    ...DEFAULT_POLICY,
    enabledFilters: [...DEFAULT_POLICY.enabledFilters],
    enabledWeighers: [...DEFAULT_POLICY.enabledWeighers],
    hostSampleSize: 50,
  });
  expect(policyFromConfig(load({ CELLSCHED_SCHEDULER_HOST_SAMPLE_SIZE: '0' })).hostSampleSize).toBe(0);
});

test("the default enabled_filters are Nova's default list, in its order, with the AZ and host-hint filters added", () => {
  const nova = [
    'ComputeFilter',
    'ComputeCapabilitiesFilter',
    'ImagePropertiesFilter',
    'ServerGroupAntiAffinityFilter',
    'ServerGroupAffinityFilter',
  ];
  const filters = policyFromConfig(load({})).enabledFilters;
  expect(filters.filter((f) => nova.includes(f))).toEqual(nova);
  expect([...filters].sort()).toEqual([...nova, 'AvailabilityZoneFilter', 'SameHostFilter', 'DifferentHostFilter'].sort());
});

test.each([
  [{ CELLSCHED_SCHEDULER_RAM_WEIGHT_MULTIPLIER: '-1' }, [], { weightMultipliers: { ram_weight_multiplier: -1 } }],
  [{}, ['--io-ops-weight-multiplier', '2.5'], { weightMultipliers: { io_ops_weight_multiplier: 2.5 } }],
  [
    { CELLSCHED_SCHEDULER_CROSS_CELL_MOVE_WEIGHT_MULTIPLIER: '-1e6' },
    [],
    { weightMultipliers: { cross_cell_move_weight_multiplier: -1e6 } },
  ],
  [
    { CELLSCHED_SCHEDULER_ENABLED_FILTERS: 'ComputeFilter,ServerGroupAffinityFilter' },
    [],
    { enabledFilters: ['ComputeFilter', 'ServerGroupAffinityFilter'] },
  ],
  [
    { CELLSCHED_SCHEDULER_MAX_PLACEMENT_RESULTS: '200', CELLSCHED_SCHEDULER_HOST_SUBSET_SIZE: '10' },
    [],
    { maxPlacementResults: 200, hostSubsetSize: 10 },
  ],
])("options map to Nova's policy names: %j %j", (env, argv, expected) => {
  expect(policyFromConfig(load(env, argv))).toMatchObject(expected);
});

test('an unknown filter name is caught by the domain, listing it', () => {
  const policy = policyFromConfig(load({ CELLSCHED_SCHEDULER_ENABLED_FILTERS: 'ComputeFilter,NoSuchFilter' }));
  expect(policyProblems(policy).join('\n')).toMatch(/NoSuchFilter/);
});

test('bad numbers are refused at load, with the option named', () => {
  expect(() => load({ CELLSCHED_SCHEDULER_HOST_SUBSET_SIZE: '0' })).toThrow(/hostSubsetSize|host-subset-size|HOST_SUBSET_SIZE/);
});

test('the API DB URL and the read-only cell role are required; the cells themselves are not options', () => {
  expect(() => loadConfig(schedulerConfigSchema, { env: {}, file: false })).toThrow(
    /apiDbUrl[\s\S]*cellDbUser|CELLSCHED_API_DB_URL[\s\S]*CELLSCHED_SCHEDULER_CELL_DB_USER/,
  );
  expect(load({})).toMatchObject({ apiDbUrl: REQUIRED.CELLSCHED_API_DB_URL, cellDbUser: 'sched', cellDbPassword: '' });
});
