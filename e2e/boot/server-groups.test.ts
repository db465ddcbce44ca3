import { IMAGE, Stack, waitFor } from './harness';

// Server groups across an in-cell reschedule, on the whole system: one cell of 3 simulated hosts,
// max_attempts 3 (2 alternates). A member's build is held on its host (the computes' `hang`
// fault) and doomed to fail reschedulably; meanwhile other members of its anti-affinity group are
// booted, and the scheduler (which sees the first member's claim) puts them on its alternates.
// Released, the build fails, and the cell conductor's reschedule tries those alternates without
// reaching the API level: placement must refuse a host another member holds.
const SEED = Number(process.env.CELLSCHED_E2E_SEED ?? Date.now() % 100000);
const stack = new Stack(`e2egrp${SEED}`, 3700 + (SEED % 100));
/** The schedulers' candidates copy TTL (CELLSCHED_SCHEDULER_CANDIDATE_CACHE_TTL), stated so the disable below can wait it out. */
const CANDIDATE_TTL_MS = 2000;

interface Server {
  id: string;
  status: string;
  fault?: { message: string; details?: string };
  'OS-EXT-SRV-ATTR:host': string | null;
}
interface Service {
  id: string;
  host: string;
  status: string;
}

beforeAll(() => {
  console.log(`e2e server groups: seed ${SEED}, prefix ${stack.prefix}, port offset ${stack.portOffset}, state ${stack.stateDir}`);
  stack.up(['--cells', '1', '--hosts-per-cell', '3', '--schedulers', '1', '--build-latency-ms', '50'], {
    CELLSCHED_SCHEDULER_CANDIDATE_CACHE_TTL: `${CANDIDATE_TTL_MS}ms`,
  });
}, 400_000);

afterAll(() => stack.down(), 120_000);

async function createGroup(name: string, policy: string): Promise<string> {
  const r = await stack.api<{ server_group: { id: string } }>('POST', '/os-server-groups', { server_group: { name, policies: [policy] } }); // 2.62: a one-policy list
  expect(r.status).toBe(200);
  return r.body.server_group.id;
}

async function boot(name: string, group: string): Promise<string> {
  const r = await stack.api<{ server: { id: string } }>('POST', '/servers', {
    server: { name, flavorRef: '1', imageRef: IMAGE, networks: 'none' },
    'os:scheduler_hints': { group },
  });
  expect(r.status).toBe(202);
  return r.body.server.id;
}

async function server(id: string): Promise<Server> {
  return (await stack.api<{ server: Server }>('GET', `/servers/${id}`)).body.server;
}

/** The server's host once the super-conductor placed it in the cell (its claim is made by then). */
async function placedOn(id: string): Promise<string> {
  return waitFor(`${id} placed on a host`, async () => (await server(id))['OS-EXT-SRV-ATTR:host'] ?? undefined, 60_000);
}

async function settled(id: string): Promise<Server> {
  return waitFor(
    `${id} to settle`,
    async () => {
      const s = await server(id);
      return ['ACTIVE', 'ERROR'].includes(s.status) ? s : undefined;
    },
    120_000,
  );
}

/** The alternates the scheduler gave the instance (its row's build_host_list, in order). */
async function alternatesOf(id: string): Promise<string[]> {
  const [row] = await stack.query<{ hosts: { serviceHost: string }[] }>(
    stack.topology().cells[0]?.dbUrl ?? '',
    'SELECT build_host_list AS hosts FROM instances WHERE uuid = $1',
    [id],
  );
  return (row?.hosts ?? []).map((h) => h.serviceHost);
}

/** Waits until `n` builds are held by the computes (delivered, not acked: their outcome is drawn). */
async function heldBuilds(n: number): Promise<void> {
  const vhost = decodeURIComponent(new URL(stack.topology().cells[0]?.transportUrl ?? '').pathname.slice(1));
  await waitFor(
    `${n} builds held by the computes`,
    async () => {
      const [ready, unacked] = stack.queueDepth(vhost, (q) => q.startsWith('compute-pool.'));
      return ready === 0 && unacked >= n ? true : undefined;
    },
    60_000,
  );
}

async function setService(host: string, status: 'enabled' | 'disabled'): Promise<void> {
  const { services } = (await stack.api<{ services: Service[] }>('GET', '/os-services?binary=nova-compute')).body;
  const svc = services.find((s) => s.host === host);
  const body = status === 'disabled' ? { status, disabled_reason: 'e2e: keep the next boot off it' } : { status };
  expect((await stack.api('PUT', `/os-services/${svc?.id ?? ''}`, body)).status).toBe(200);
}

/** Hosts of the group's members as the API shows them (`GET /os-server-groups/{id}`, then each member). */
async function memberHosts(group: string): Promise<Map<string, string | null>> {
  const { members } = (await stack.api<{ server_group: { members: string[] } }>('GET', `/os-server-groups/${group}`)).body.server_group;
  const out = new Map<string, string | null>();
  for (const m of members) {
    const s = await server(m);
    out.set(m, s.status === 'ACTIVE' ? s['OS-EXT-SRV-ATTR:host'] : null);
  }
  return out;
}

/**
 * Boots the first member with its build held and doomed (hang + every build failing
 * reschedulably), then lets the following boots succeed: returns the first member, its host and
 * its alternates once its build is held.
 */
async function firstMemberHeld(group: string, name: string): Promise<{ id: string; host: string; alternates: string[] }> {
  await stack.setFaults({ hang: true, rescheduleRate: 1 });
  const id = await boot(name, group);
  const host = await placedOn(id);
  await heldBuilds(1);
  await stack.setFaults({ rescheduleRate: 0 }); // the outcome of the held build is already drawn
  const alternates = await alternatesOf(id);
  expect(alternates).toHaveLength(2);
  expect(alternates).not.toContain(host);
  return { id, host, alternates };
}

afterEach(async () => {
  await stack.setFaults({ hang: false, rescheduleRate: 0 });
});

test('anti-affinity: a member rescheduled while another member took its first alternate goes to the next alternate, never onto that member', async () => {
  const group = await createGroup('grp-alt', 'anti-affinity');
  const a = await firstMemberHeld(group, 'grp-alt-a');
  const [taken, free] = a.alternates as [string, string];
  // keep the second member off `free`, so it takes the first member's first alternate
  await setService(free, 'disabled');
  await new Promise((r) => setTimeout(r, CANDIDATE_TTL_MS + 3500)); // the scheduler's candidate copy and host cache
  const b = await boot('grp-alt-b', group);
  expect(await placedOn(b)).toBe(taken);
  await setService(free, 'enabled');
  await heldBuilds(2);
  await stack.setFaults({ hang: false });

  const [sa, sb] = [await settled(a.id), await settled(b)];
  expect([sa.status, sa['OS-EXT-SRV-ATTR:host']]).toEqual(['ACTIVE', free]);
  expect([sb.status, sb['OS-EXT-SRV-ATTR:host']]).toEqual(['ACTIVE', taken]);
  const hosts = [...(await memberHosts(group)).values()];
  expect(hosts.sort()).toEqual([free, taken].sort());
});

test('anti-affinity: when other members took every alternate, the rescheduled member ends in ERROR with a fault naming the group, and holds nothing', async () => {
  const group = await createGroup('grp-full', 'anti-affinity');
  const a = await firstMemberHeld(group, 'grp-full-a');
  // the two other members can only go to the first member's two alternates (3 hosts, anti-affinity)
  const others = [await boot('grp-full-b', group), await boot('grp-full-c', group)];
  expect((await Promise.all(others.map(placedOn))).sort()).toEqual([...a.alternates].sort());
  await heldBuilds(3);
  await stack.setFaults({ hang: false });

  const sa = await settled(a.id);
  expect(sa.status).toBe('ERROR');
  expect(sa.fault?.message).toContain('Exceeded maximum number of retries');
  for (const alt of a.alternates)
    expect(sa.fault?.details).toContain(`${alt}: Unable to claim for consumer ${a.id}: server group ${group} has the anti-affinity policy`);
  for (const o of others) expect((await settled(o)).status).toBe('ACTIVE');
  const active = [...(await memberHosts(group)).values()].filter((h): h is string => h !== null);
  expect(active).toHaveLength(2);
  expect(new Set(active).size).toBe(2);
  expect((await stack.allocationsByConsumer()).has(a.id)).toBe(false);
});
