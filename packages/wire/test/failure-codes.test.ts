// The failure-code registry is a published contract: this list pins every code's text. Adding a
// code adds a line here; changing or removing one must fail (callers and operators branch on them).
import { allFailureCodes, FAILURE_CODES, makeFailure } from '../src';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const PUBLISHED = [
  'grpc.internal',
  'grpc.dependency_unavailable',
  'grpc.cancelled',
  'grpc.unavailable',
  'grpc.deadline_exceeded',
  'bus.closed',
  'bus.connection.unavailable',
  'bus.connection.access_refused',
  'bus.invalid_argument',
  'bus.publish.timeout',
  'bus.publish.nacked',
  'bus.publish.unroutable',
  'bus.publish.access_refused',
  'bus.rpc_version.unsupported',
  'bus.message.invalid',
  'bus.message.undecodable',
  'bus.delivery.limit_exceeded',
  'bus.handler.failed',
  'bus.queue.locked',
  'bus.server.not_served',
  'placement.undefined_code',
  'placement.inventory.inuse',
  'placement.concurrent_update',
  'placement.duplicate_name',
  'placement.resource_provider.inuse',
  'placement.resource_provider.cannot_delete_parent',
  'placement.resource_provider.not_found',
  'placement.query.duplicate_key',
  'placement.query.bad_value',
  'placement.query.missing_value',
  'placement.allocation.capacity_exceeded',
  'placement.request.invalid',
  'placement.claim.group_policy',
  'placement_client.allocation_request.invalid',
  'placement_client.placement.unreachable',
  'scheduler.no_valid_host',
  'scheduler.request.invalid',
  'scheduler.config.invalid',
  'scheduler.group_lock.timeout',
  'super_conductor.build.unroutable',
  'super_conductor.cell.not_open',
  'super_conductor.action.unroutable',
  'super_conductor.action.expired',
  'super_conductor.action.forced_host_refused',
  'cell_conductor.build.unroutable',
  'cell_conductor.build.host_gone',
  'cell_conductor.build.host_down',
  'cell_conductor.build.timed_out',
  'cell_conductor.audit.providers_unknown',
  'cell_conductor.step.unroutable',
  'cell_conductor.step.host_gone',
  'cell_conductor.step.timed_out',
  'compute.build.rescheduled',
  'compute.build.aborted',
  'compute.host.not_served',
  'compute.conductor.unroutable',
  'compute.no_host',
  'compute.step.failed',
];

test('every published code keeps its text, and every code of the registry is published here', () => {
  expect(allFailureCodes()).toEqual(PUBLISHED);
});

test("codes are unique and shaped <service>.<noun>.<condition> (two parts for a few of Placement's and grpc's)", () => {
  expect(new Set(allFailureCodes()).size).toBe(allFailureCodes().length);
  for (const code of allFailureCodes()) expect(code).toMatch(/^[a-z_]+(\.[a-z_]+){1,2}$/);
});

test('each code is named after the component that emits it', () => {
  const prefix: Record<keyof typeof FAILURE_CODES, string> = {
    grpc: 'grpc',
    bus: 'bus',
    placement: 'placement',
    placementClient: 'placement_client',
    scheduler: 'scheduler',
    superConductor: 'super_conductor',
    cellConductor: 'cell_conductor',
    compute: 'compute',
  };
  for (const [group, codes] of Object.entries(FAILURE_CODES)) {
    for (const code of Object.values(codes)) expect(code.split('.')[0]).toBe(prefix[group as keyof typeof FAILURE_CODES]);
  }
});

test('the registry cannot be changed at run time', () => {
  expect(Object.isFrozen(FAILURE_CODES)).toBe(true);
  expect(Object.isFrozen(FAILURE_CODES.scheduler)).toBe(true);
  expect(() => {
    (FAILURE_CODES.scheduler as { noValidHost: string }).noValidHost = 'x';
  }).toThrow(TypeError);
});

test('makeFailure fills the optional parts', () => {
  expect(makeFailure(FAILURE_CODES.scheduler.noValidHost, 'none')).toEqual({
    code: 'scheduler.no_valid_host',
    message: 'none',
    retryable: false,
    expected: false,
    metadata: {},
    diagnosis: [],
  });
});

// proto/ is the source of truth of the wire: the codes its comments promise (`Failure{code: "..."}`)
// must be codes of the registry, so a code renamed on one side only fails here.
describe('the registry agrees with proto/', () => {
  const protoDir = join(__dirname, '..', '..', '..', 'proto');
  const protoFiles = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? protoFiles(join(dir, e.name)) : e.name.endsWith('.proto') ? [join(dir, e.name)] : [],
    );
  const promised = new Map<string, string>();
  for (const file of protoFiles(protoDir)) {
    for (const m of readFileSync(file, 'utf8').matchAll(/code:\s*"([^"]+)"/g)) promised.set(m[1] as string, relative(protoDir, file));
  }

  test('proto names codes in its Failure comments (the check below reads them)', () => {
    expect([...promised.keys()]).toEqual(expect.arrayContaining(['scheduler.no_valid_host', 'placement.concurrent_update']));
  });

  test('every code proto names is a code of the registry', () => {
    const registry = new Set<string>(allFailureCodes());
    expect([...promised].filter(([code]) => !registry.has(code))).toEqual([]);
  });
});
