/** The loopback fault-injection endpoint: plan edits (validated as a whole), hang release, guests and stats. */
import type { Server } from 'node:http';
import { FaultControl, startControlServer } from '../../src/adapters/control-server';
import { NO_FAULTS } from '../../src/domain/fault-plan';
import { Guests } from '../../src/domain/hosts';

let server: Server;
let base: string;
const control = new FaultControl(NO_FAULTS);
const guests = new Guests();

beforeAll(async () => {
  const s = await startControlServer(0, control, guests);
  server = s.server;
  base = `http://127.0.0.1:${s.port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const put = (body: string): Promise<Response> =>
  fetch(`${base}/faults`, { method: 'PUT', body, headers: { 'content-type': 'application/json' } });

test('PUT /faults applies a valid partial plan; GET /faults shows it', async () => {
  const res = await put('{"rescheduleRate":0.25,"abortRate":0.1}');
  expect(res.status).toBe(200);
  expect(await (await fetch(`${base}/faults`)).json()).toEqual({ rescheduleRate: 0.25, abortRate: 0.1, crashRate: 0, hang: false });
});

test('a bad body changes nothing and lists every problem', async () => {
  const before = control.current();
  const res = await put('{"rescheduleRate":3,"hang":"no","bogus":1}');
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: string }).error).toBe(
    'rescheduleRate must be a number in [0, 1]; hang must be a boolean; unknown field bogus',
  );
  expect(control.current()).toBe(before);
  expect((await put('not json')).status).toBe(400);
  expect((await put('[1]')).status).toBe(400);
});

test('hang holds builds until cleared', async () => {
  await put('{"hang":true}');
  let released = false;
  const waiting = control.released('h1').then(() => {
    released = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  expect(released).toBe(false);
  await put('{"hang":false}');
  await waiting;
  expect(released).toBe(true);
});

test('hangingHosts holds the builds of the hosts listed until they are taken off the list; other hosts build', async () => {
  expect((await put('{"hangingHosts":["h1","h2"]}')).status).toBe(200);
  let released = false;
  const waiting = control.released('h1').then(() => {
    released = true;
  });
  let otherReleased = false;
  void control.released('h3').then(() => {
    otherReleased = true;
  });
  await new Promise((r) => setTimeout(r, 50));
  expect([released, otherReleased]).toEqual([false, true]);
  await put('{"hangingHosts":["h2"]}');
  await waiting;
  expect(released).toBe(true);
  expect((await put('{"hangingHosts":"h1"}')).status).toBe(400);
  await put('{"hangingHosts":[]}');
});

test('step faults: PUT replaces the steps map; a step hang holds only that step (and host) until cleared', async () => {
  const res = await put('{"steps":{"prep_resize":{"failRate":1,"hosts":["h1"]},"finish_resize":{"hang":true}}}');
  expect(res.status).toBe(200);
  expect(((await (await fetch(`${base}/faults`)).json()) as { steps: unknown }).steps).toEqual({
    prep_resize: { failRate: 1, hosts: ['h1'] },
    finish_resize: { hang: true },
  });
  let released = false;
  const waiting = control
    .releasedWhen((p) => p.steps?.finish_resize?.hang === true)
    .then(() => {
      released = true;
    });
  await put('{"hang":false}');
  await new Promise((r) => setTimeout(r, 50));
  expect(released).toBe(false);
  await put('{"steps":{"prep_resize":{"failRate":1}}}');
  await waiting;
  expect(released).toBe(true);
  expect((await put('{"steps":{"nope":{}}}')).status).toBe(400);
  await put('{"steps":{}}');
});

test('GET /guests and /stats report the guests', async () => {
  guests.add('h1', 'i1', 1);
  guests.add('h1', 'i2', 1);
  guests.remove('h1', 'i2', 1);
  expect(await (await fetch(`${base}/guests`)).json()).toEqual({ h1: ['i1'] });
  expect(await (await fetch(`${base}/stats`)).json()).toEqual({ spawned: 2, terminated: 1 });
  expect((await fetch(`${base}/nope`)).status).toBe(404);
});

test("GET /guests/detail: each guest's attempt, power and, placed by a live migration, its block_migration", async () => {
  guests.place('h2', 'i3', 'running', 'false');
  const detail = (await (await fetch(`${base}/guests/detail`)).json()) as Record<string, Record<string, unknown>>;
  expect(detail.h1).toEqual({ i1: { attempt: 1, power: 'running' } });
  expect(detail.h2).toEqual({ i3: { attempt: 0, power: 'running', blockMigration: 'false' } });
});
