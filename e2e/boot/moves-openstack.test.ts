import { runClientScript } from '../clients/run-script';
import { Stack } from './harness';

// Issue 13's sequence with the real OpenStack client (Debian's python3-openstackclient and
// osc-placement): e2e/moves/openstack-moves.sh against a private stack of one cell of 3 hosts.
// The script checks each step's status, host and flavor, and placement's allocations; then
// e2e/moves/openstack-service-delete.sh deletes compute services with the client.
const SEED = Number(process.env.CELLSCHED_E2E_SEED ?? Date.now() % 100000);
const stack = new Stack(`e2eosc${SEED}`, 4500 + (SEED % 100));

beforeAll(() => {
  console.log(`e2e openstack moves: seed ${SEED}, prefix ${stack.prefix}, port offset ${stack.portOffset}, state ${stack.stateDir}`);
  stack.up(['--cells', '1', '--hosts-per-cell', '3', '--schedulers', '1', '--build-latency-ms', '50']);
}, 400_000);

afterAll(() => stack.down(), 120_000);

test("openstack server create --hint same_host / different_host: on the hinted server's host / elsewhere, placement agreeing; no such server: NoValidHost", () => {
  expect(runClientScript('clients/host-hints.sh', [stack.apiUrl, stack.placementUrl], 300_000)).toContain('host-hints: every step passed');
}, 360_000);

test('openstack server stop/start/reboot/migrate/resize/confirm/revert/live-migrate/shelve/unshelve/rebuild/evacuate and server migration list, as a user types them', () => {
  expect(runClientScript('moves/openstack-moves.sh', [stack.apiUrl, stack.placementUrl], 540_000)).toContain(
    'openstack-moves: every step passed',
  );
}, 600_000);

// Issue 16: every `openstack flavor` command (create, list, show, set/unset, access, delete) as
// against Nova; the script cleans up the flavors it made.
test('openstack flavor create/list/show/set/unset/delete and flavor access, as an operator types them', () => {
  expect(runClientScript('clients/flavors.sh', [stack.apiUrl], 240_000)).toContain('openstack-flavors: every step passed');
}, 300_000);

// Issue 16: host aggregates and availability zones with the client (aggregate create/list/show/set/
// add host/remove host/delete, availability zone list, server create --availability-zone), placement's
// provider aggregates checked after each aggregate step; the script cleans up what it made.
test('openstack aggregate create/list/show/set/add host/remove host/delete and server create --availability-zone, mirrored in placement', () => {
  expect(runClientScript('clients/aggregates.sh', [stack.apiUrl, stack.placementUrl], 240_000)).toContain('aggregates: every step passed');
}, 300_000);

// Last (it deletes two of the stack's three hosts): `openstack compute service delete` refused for
// a host with a server, and for an idle host its service and resource provider gone when it returns.
test('openstack compute service delete: 409 for a busy host; the service and its resource provider gone when it returns', () => {
  expect(runClientScript('moves/openstack-service-delete.sh', [stack.apiUrl, stack.placementUrl], 240_000)).toContain(
    'openstack-service-delete: every step passed',
  );
}, 300_000);
