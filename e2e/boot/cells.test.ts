import { IMAGE, Stack, waitFor } from './harness';

// Cells follow the API database on a running system (issue 12; Nova needs a SIGHUP): a cell
// disabled with `cellsched-manage cell_v2 update_cell --disable` gets no new builds while its
// servers can still be shown and deleted, and enabling it brings it back; a cell added at run
// time (`pnpm stack up --cells 3` on the running system: create_cell, db sync with the read-only
// grants, its conductor and compute started, discover_hosts) receives builds without the
// schedulers or the super-conductor being restarted; `delete_cell` closes their connections.
// One system: 2 cells x 2 hosts, 2 schedulers; the tests run in order and share it.
const SEED = Number(process.env.CELLSCHED_E2E_SEED ?? Date.now() % 100000);
const stack = new Stack(`e2ecell${SEED}`, 3500 + (SEED % 100));
/**
 * How long a mapping change takes to reach every process when nothing else happens meanwhile:
 * the scheduler re-reads the mappings with its host cache, and a request finding that copy older
 * than 3 s (3 x CELLSCHED_SCHEDULER_HOST_REFRESH) waits for a fresh one; the super-conductor
 * re-reads them every 2 s (CELLSCHED_CELL_MAPPINGS_REFRESH).
 */
const FOLLOW_MS = 4000;
const RUNNING = ['scheduler-0', 'scheduler-1', 'super-conductor'];

interface Server {
  id: string;
  status: string;
  'OS-EXT-SRV-ATTR:host': string | null;
  fault?: { message: string; details?: string };
}

beforeAll(() => {
  console.log(`e2e cells: seed ${SEED}, prefix ${stack.prefix}, port offset ${stack.portOffset}, state ${stack.stateDir}`);
  stack.up(['--cells', '2', '--hosts-per-cell', '2', '--schedulers', '2', '--build-latency-ms', '50']);
}, 400_000);

afterAll(() => stack.down(), 120_000);

const cellUuid = (name: string): string => {
  const c = stack.topology().cells.find((x) => x.name === name);
  if (c === undefined) throw new Error(`no ${name} in the topology`);
  return c.uuid;
};
const setCell = (name: string, how: '--disable' | '--enable'): void => {
  stack.manage(['cell_v2', 'update_cell', '--cell_uuid', cellUuid(name), how]);
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Creates `n` servers, one request each, all at once; returns their ids. */
async function createServers(prefix: string, n: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const r = await stack.api<{ server: { id: string } }>('POST', '/servers', {
        server: { name: `${prefix}-${i}`, flavorRef: '1', imageRef: IMAGE, networks: 'none' },
      });
      expect(r.status).toBe(202);
      return r.body.server.id;
    }),
  );
}

/** Waits until every server is ACTIVE or ERROR; returns id → [status, cell of its host ('' if none), fault]. */
async function settled(ids: readonly string[]): Promise<Map<string, [string, string, string]>> {
  return waitFor(
    `${ids.length} servers to settle`,
    async () => {
      const out = new Map<string, [string, string, string]>();
      for (const id of ids) {
        const s = (await stack.api<{ server: Server }>('GET', `/servers/${id}`)).body.server;
        if (!['ACTIVE', 'ERROR'].includes(s.status)) return undefined;
        out.set(id, [s.status, (s['OS-EXT-SRV-ATTR:host'] ?? '').split('-')[0] ?? '', s.fault?.message ?? '']);
      }
      return out;
    },
    180_000,
  );
}

const cellsOf = (m: Map<string, [string, string, string]>): string[] =>
  [...m.values()].map(([status, cell, fault]) => (status === 'ACTIVE' ? cell : `${status}: ${fault}`));

async function deleteServer(id: string): Promise<void> {
  expect((await stack.api('DELETE', `/servers/${id}`)).status).toBe(204);
  await waitFor(
    `server ${id} to be gone`,
    async () => ((await stack.api('GET', `/servers/${id}`)).status === 404 ? true : undefined),
    60_000,
  );
}

/** Sessions a process (by application_name prefix) holds on a database, seen by the database's owner. */
async function sessions(db: string, appPrefix: string): Promise<number> {
  const rows = await stack.query<{ n: string }>(
    db,
    'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE $1',
    [`${appPrefix}%`],
  );
  return Number(rows[0]?.n);
}

test('a cell disabled at run time gets no new builds, its servers can still be shown and deleted; enabled, it gets builds again', async () => {
  // servers in both cells first (one at a time until each cell has one: the weighers' spread is not a promise)
  const before = new Map<string, [string, string, string]>();
  for (let i = 0; i < 12 && new Set(cellsOf(before)).size < 2; i++)
    for (const [id, v] of await settled(await createServers(`before${i}`, 1))) before.set(id, v);
  expect(new Set(cellsOf(before))).toEqual(new Set(['cell1', 'cell2']));
  const inCell1 = [...before].filter(([, [, cell]]) => cell === 'cell1').map(([id]) => id);

  setCell('cell1', '--disable');
  await pause(FOLLOW_MS);
  const during = await settled(await createServers('during', 6));
  expect(cellsOf(during)).toEqual(Array(6).fill('cell2'));
  // the disabled cell's servers: shown, then deleted (through the super-conductor, which keeps the cell open)
  for (const id of inCell1) {
    const s = (await stack.api<{ server: Server }>('GET', `/servers/${id}`)).body.server;
    expect([s.status, s['OS-EXT-SRV-ATTR:host']?.startsWith('cell1-')]).toEqual(['ACTIVE', true]);
    await deleteServer(id);
  }

  setCell('cell1', '--enable');
  await pause(FOLLOW_MS);
  const after = await settled(await createServers('after', 4));
  expect(cellsOf(after)).toContain('cell1'); // the emptiest hosts again (RAM spread)
  for (const id of [...before.keys(), ...during.keys(), ...after.keys()].filter((x) => !inCell1.includes(x))) await deleteServer(id);
});

test('a cell created at run time receives builds without restarting the schedulers or the super-conductor; delete_cell closes their connections to it', async () => {
  const pids = RUNNING.map((s) => stack.pid(s));
  stack.up(['--cells', '3']); // create_cell + db sync (with the read-only grants) + its conductor and compute + discover_hosts
  expect(RUNNING.map((s) => stack.pid(s))).toEqual(pids);
  setCell('cell1', '--disable');
  setCell('cell2', '--disable');
  await pause(FOLLOW_MS);
  const ids = await createServers('new', 4);
  expect(cellsOf(await settled(ids))).toEqual(Array(4).fill('cell3'));
  for (const id of ids) await deleteServer(id);

  const cell3 = stack.topology().cells.find((c) => c.name === 'cell3');
  if (cell3 === undefined) throw new Error('no cell3 in the topology');
  expect(await sessions(cell3.dbUrl, 'super-conductor-')).toBeGreaterThan(0);
  // exit 3 while a deleted server's instance mapping is still being removed (the delete's last step)
  await waitFor(
    'delete_cell to succeed',
    async () => {
      try {
        stack.manage(['cell_v2', 'delete_cell', '--cell_uuid', cell3.uuid, '--force']);
        return true;
      } catch {
        return undefined;
      }
    },
    30_000,
  );
  setCell('cell1', '--enable');
  setCell('cell2', '--enable');
  await pause(FOLLOW_MS);
  const later = await settled(await createServers('later', 2)); // each scheduler replica re-reads the mappings on a request
  expect(new Set(cellsOf(later)).has('cell3')).toBe(false);
  await waitFor(
    'the super-conductor and the schedulers to close their cell3 connections',
    async () => ((await sessions(cell3.dbUrl, 'super-conductor-')) + (await sessions(cell3.dbUrl, 'scheduler-')) === 0 ? true : undefined),
    30_000,
  );
  expect(RUNNING.map((s) => stack.pid(s))).toEqual(pids);
});
