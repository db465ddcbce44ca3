import { IMAGE, Stack, waitFor } from './harness';

// What the computes report about their hosts, and the filters and weighers that read it, on the
// whole system: one cell of 3 simulated hosts, the third an aarch64 host (the others x86_64),
// the computes writing their resource tracker stats every 300 ms.
// - ImagePropertiesFilter: an image's hw_architecture is honoured (supported_instances).
// - BuildFailureWeigher: a host that keeps failing builds (failed_builds in its stats) is
//   avoided by the next boots, without a reschedule.
// - IoOpsWeigher (io_ops_weight_multiplier -10 here, an operator's choice: Nova's default -1.0 weighs
//   as much as one resource weigher): a host with a build in flight (io_workload) is passed over
//   though it is the emptiest; once the build ends, the same host takes the next boot.
// - ComputeCapabilitiesFilter: a flavor's `capabilities:cpu_info:arch` is matched against the
//   cpu_info each host reported.
const SEED = Number(process.env.CELLSCHED_E2E_SEED ?? Date.now() % 100000);
const stack = new Stack(`e2ehdata${SEED}`, 4700 + (SEED % 100));
const H = (n: number): string => `cell1-compute-${n}`;

interface Server {
  id: string;
  status: string;
  fault?: { message: string; details?: string };
  'OS-EXT-SRV-ATTR:host': string | null;
}
interface Service {
  id: string;
  host: string;
}

beforeAll(() => {
  console.log(`e2e host data: seed ${SEED}, prefix ${stack.prefix}, port offset ${stack.portOffset}, state ${stack.stateDir}`);
  stack.up(['--cells', '1', '--hosts-per-cell', '3', '--schedulers', '1', '--build-latency-ms', '50'], {
    CELLSCHED_COMPUTE_HOST_ARCHS: `${H(3)}=aarch64`,
    CELLSCHED_COMPUTE_STATS_INTERVAL_MS: '300',
    CELLSCHED_SCHEDULER_CANDIDATE_CACHE_TTL: '2s',
    CELLSCHED_SCHEDULER_IO_OPS_WEIGHT_MULTIPLIER: '-10',
  });
}, 400_000);

afterAll(() => stack.down(), 120_000);

function image(arch: string): string {
  const out = stack.manage(['image-create', '--name', `img-${arch}`, '--property', `hw_architecture=${arch}`]);
  const id = /\|\s*id\s*\|\s*([0-9a-f-]{36})/.exec(out)?.[1];
  if (id === undefined) throw new Error(`no image id in: ${out}`);
  return id;
}

async function boot(name: string, imageRef = IMAGE): Promise<string> {
  const r = await stack.api<{ server: { id: string } }>('POST', '/servers', {
    server: { name, flavorRef: '1', imageRef, networks: 'none' },
  });
  expect(r.status).toBe(202);
  return r.body.server.id;
}

async function settled(id: string): Promise<Server> {
  return waitFor(
    `${id} to settle`,
    async () => {
      const s = (await stack.api<{ server: Server }>('GET', `/servers/${id}`)).body.server;
      return ['ACTIVE', 'ERROR'].includes(s.status) ? s : undefined;
    },
    120_000,
  );
}

async function hostOf(id: string): Promise<string | null> {
  const s = await settled(id);
  expect(s.status).toBe('ACTIVE');
  return s['OS-EXT-SRV-ATTR:host'];
}

async function setService(host: string, status: 'enabled' | 'disabled'): Promise<void> {
  const { services } = (await stack.api<{ services: Service[] }>('GET', '/os-services?binary=nova-compute')).body;
  const body = status === 'disabled' ? { status, disabled_reason: 'e2e: only the failing host' } : { status };
  expect((await stack.api('PUT', `/os-services/${services.find((s) => s.host === host)?.id ?? ''}`, body)).status).toBe(200);
}

/**
 * Past the scheduler's host cache max staleness (3 x 1 s) and its candidates copy's TTL (2 s
 * here: a disabled host's provider carries COMPUTE_STATUS_DISABLED), the next decision reads
 * the cells and placement again.
 */
const pastHostCacheStaleness = (): Promise<void> => new Promise((r) => setTimeout(r, 4000));

const cellDb = (): string => stack.topology().cells[0]?.dbUrl ?? '';

test("the hosts report supported_instances and cpu_info: os-hypervisors shows each one's architecture", async () => {
  const { hypervisors } = (
    await stack.api<{ hypervisors: { hypervisor_hostname: string; cpu_info: { arch: string } }[] }>('GET', '/os-hypervisors/detail')
  ).body;
  expect(Object.fromEntries(hypervisors.map((h) => [h.hypervisor_hostname, h.cpu_info.arch]))).toEqual({
    [H(1)]: 'x86_64',
    [H(2)]: 'x86_64',
    [H(3)]: 'aarch64',
  });
});

test('ImagePropertiesFilter: an aarch64 image lands on the aarch64 host only, an x86_64 image never there, an s390x image nowhere', async () => {
  const arm = image('aarch64');
  const x86 = image('x86_64');
  const s390 = image('s390x');
  const armHosts = await Promise.all([1, 2, 3].map(async (i) => (await settled(await boot(`arm-${i}`, arm)))['OS-EXT-SRV-ATTR:host']));
  expect(armHosts).toEqual([H(3), H(3), H(3)]);
  const x86Hosts = await Promise.all([1, 2, 3, 4].map(async (i) => (await settled(await boot(`x86-${i}`, x86)))['OS-EXT-SRV-ATTR:host']));
  expect(x86Hosts.filter((h) => h === H(3) || h === null)).toEqual([]);
  const none = await settled(await boot('s390', s390));
  expect(none.status).toBe('ERROR');
  expect(none.fault?.message).toContain('No valid host');
});

test('BuildFailureWeigher: once a host failed a build, the next boots go elsewhere at their first attempt', async () => {
  await stack.setFaults({ failingHosts: [H(1)] });
  try {
    // only H(1) can take the first boot: it fails there, and with no other host it ends in ERROR
    await setService(H(2), 'disabled');
    await setService(H(3), 'disabled');
    await pastHostCacheStaleness();
    const doomed = await settled(await boot('doomed'));
    expect(doomed.status).toBe('ERROR');
    await waitFor(
      `failed_builds of ${H(1)} in its stats`,
      async () => {
        const [row] = await stack.query<{ failed: string | null }>(
          cellDb(),
          "SELECT stats->>'failed_builds' AS failed FROM compute_nodes WHERE host = $1",
          [H(1)],
        );
        return Number(row?.failed ?? 0) >= 1 ? true : undefined;
      },
      30_000,
    );
    await setService(H(2), 'enabled');
    await setService(H(3), 'enabled');
    await pastHostCacheStaleness();
    // H(1) is the emptiest host (its one build failed): every spread weigher prefers it, and only its failures sink it
    const ids = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => boot(`after-${i}`)));
    const servers = await Promise.all(ids.map(settled));
    expect(servers.map((s) => `${s.status} ${s.fault?.message ?? ''}`)).toEqual(ids.map(() => 'ACTIVE '));
    const rows = await stack.query<{ host: string; build_attempt: number }>(
      cellDb(),
      'SELECT host, build_attempt FROM instances WHERE uuid = ANY($1::uuid[])',
      [ids],
    );
    expect(rows.filter((r) => r.host === H(1) || r.build_attempt !== 1)).toEqual([]);
  } finally {
    await stack.setFaults({ failingHosts: [] });
  }
});

test('ComputeCapabilitiesFilter: a flavor asking capabilities:cpu_info:arch lands on the host whose cpu_info says it, or nowhere', async () => {
  const flavor = async (name: string, arch: string): Promise<string> => {
    const f = await stack.api<{ flavor: { id: string } }>('POST', '/flavors', { flavor: { name, ram: 512, vcpus: 1, disk: 1 } });
    expect(f.status).toBe(200);
    const specs = await stack.api('POST', `/flavors/${f.body.flavor.id}/os-extra_specs`, {
      extra_specs: { 'capabilities:cpu_info:arch': arch },
    });
    expect(specs.status).toBe(200);
    return f.body.flavor.id;
  };
  const bootFlavor = async (name: string, flavorRef: string): Promise<Server> => {
    const r = await stack.api<{ server: { id: string } }>('POST', '/servers', {
      server: { name, flavorRef, imageRef: IMAGE, networks: 'none' },
    });
    expect(r.status).toBe(202);
    return settled(r.body.server.id);
  };
  const arm = await flavor('caps-aarch64', 'aarch64');
  const servers = await Promise.all([1, 2, 3].map((i) => bootFlavor(`caps-arm-${i}`, arm)));
  expect(servers.map((s) => `${s.status} ${s['OS-EXT-SRV-ATTR:host'] ?? ''}`)).toEqual([1, 2, 3].map(() => `ACTIVE ${H(3)}`));
  const none = await bootFlavor('caps-s390x', await flavor('caps-s390x', 's390x'));
  expect(none.status).toBe('ERROR');
  expect(none.fault?.message).toContain('No valid host');
});

test('IoOpsWeigher: the emptiest host is passed over while a build is in flight on it, and takes the next boot once it ended', async () => {
  // a clean slate: no server left by the tests above
  const { servers } = (await stack.api<{ servers: { id: string }[] }>('GET', '/servers')).body;
  await Promise.all(servers.map((s) => stack.api('DELETE', `/servers/${s.id}`)));
  await waitFor(
    'every server deleted',
    async () => ((await stack.api<{ servers: unknown[] }>('GET', '/servers')).body.servers.length === 0 ? true : undefined),
    60_000,
  );
  const ioWorkload = async (host: string): Promise<number> => {
    const [row] = await stack.query<{ io: string | null }>(
      cellDb(),
      "SELECT stats->>'io_workload' AS io FROM compute_nodes WHERE host = $1",
      [host],
    );
    return Number(row?.io ?? 0);
  };
  await stack.setFaults({ hangingHosts: [H(1)] });
  try {
    // one build hangs on H(1) (only H(1) enabled): in flight, io_workload 1
    await setService(H(2), 'disabled');
    await setService(H(3), 'disabled');
    await pastHostCacheStaleness();
    const hung = await boot('in-flight');
    await waitFor(`io_workload 1 on ${H(1)}`, async () => ((await ioWorkload(H(1))) === 1 ? true : undefined), 30_000);
    // two servers on each of H(2) and H(3), one host enabled at a time: H(1), with one, is the emptiest
    await setService(H(1), 'disabled');
    for (const [on, off] of [
      [H(2), H(3)],
      [H(3), H(2)],
    ] as const) {
      await setService(on, 'enabled');
      await setService(off, 'disabled');
      await pastHostCacheStaleness();
      expect([await hostOf(await boot(`fill-${on}-1`)), await hostOf(await boot(`fill-${on}-2`))]).toEqual([on, on]);
    }
    await setService(H(2), 'enabled');
    await setService(H(1), 'enabled');
    await pastHostCacheStaleness();
    expect(await ioWorkload(H(1))).toBe(1);
    // NOTE: the host as soon as the scheduler chose it (a boot sent to H(1) would hang there, not fail)
    const busyId = await boot('while-busy');
    const chosen = await waitFor(
      `${busyId} to be scheduled`,
      async () => (await stack.api<{ server: Server }>('GET', `/servers/${busyId}`)).body.server['OS-EXT-SRV-ATTR:host'] ?? undefined,
      60_000,
    );
    expect([H(2), H(3)]).toContain(chosen);
    expect(await hostOf(busyId)).toBe(chosen);
    // the build ends: io_workload 0, the same usage as before, and H(1) takes the next boot
    await stack.setFaults({ hangingHosts: [] });
    expect(await hostOf(hung)).toBe(H(1));
    await waitFor(`io_workload 0 on ${H(1)}`, async () => ((await ioWorkload(H(1))) === 0 ? true : undefined), 30_000);
    await pastHostCacheStaleness();
    expect(await hostOf(await boot('after-busy'))).toBe(H(1));
  } finally {
    await stack.setFaults({ hangingHosts: [] });
  }
});
