/**
 * GetAllocationCandidates (gRPC) timed with claims in between, as the scheduler drives
 * placement: a placement process (this build, or another given with --main) on a fresh
 * database of N flat providers (VCPU 32 / MEMORY_MB 8192 / DISK_GB 8192, 1-3 aggregates
 * and traits, as perfload), then per decision: candidates (limit 200, a new seed) and a
 * Claim on one of them. Sequential (latency) then --clients concurrent loops (throughput).
 *
 *   pnpm exec tsx services/placement/test/bench/grpc-candidates.ts [--providers 10000]
 *     [--decisions 300] [--clients 4] [--main services/placement/dist/main.js] [--port 15778]
 *   BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the placement process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '@cellsched/db';
import { createGrpcClient, type GrpcClient } from '@cellsched/grpc';
import { PlacementServiceClient, type GetAllocationCandidatesRequest } from '@cellsched/wire';

type Client = GrpcClient<typeof PlacementServiceClient.service>;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const FILL = `
  INSERT INTO placement_aggregates (uuid) VALUES ('14a5c8a3-5a99-4e8f-88be-00d85fcb1c17'), ('66d98e7c-3c25-485d-a0dc-1cea651884de'), ('a59dbb28-fd98-4c6e-9ec5-ae5f3d04b0aa');
  INSERT INTO resource_providers (uuid, name) SELECT gen_random_uuid(), 'cn' || g FROM generate_series(1, $N) g;
  UPDATE resource_providers SET root_provider_id = id;
  INSERT INTO inventories (resource_provider_id, resource_class_id, total, min_unit, max_unit) SELECT id, 0, 32, 1, 16 FROM resource_providers;
  INSERT INTO inventories (resource_provider_id, resource_class_id, total, min_unit, max_unit) SELECT id, 1, 8192, 128, 8192 FROM resource_providers;
  INSERT INTO inventories (resource_provider_id, resource_class_id, total, min_unit, max_unit) SELECT id, 2, 8192, 5, 8192 FROM resource_providers;
  INSERT INTO resource_provider_aggregates SELECT r.id, a.id FROM resource_providers r, placement_aggregates a WHERE a.id <= (r.id % 3) + 1;
  INSERT INTO resource_provider_traits SELECT r.id, t.id FROM resource_providers r,
    (SELECT id, row_number() OVER (ORDER BY name) rn FROM traits WHERE name IN ('HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE2', 'STORAGE_DISK_SSD')) t WHERE t.rn <= (r.id % 3) + 1;
  ANALYZE;`;

function query(seed: number): GetAllocationCandidatesRequest {
  return {
    groups: [
      {
        suffix: '',
        resources: { VCPU: 1, MEMORY_MB: 256, DISK_GB: 10 },
        required: [],
        forbidden: [],
        memberOf: [],
        forbiddenMemberOf: [],
        inTree: '',
      },
    ],
    groupPolicy: '',
    limit: 200,
    rootRequired: [],
    rootForbidden: [],
    sameSubtree: [],
    seed,
  };
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

function stats(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  return `p50 ${pct(s, 50).toFixed(1)} ms, p90 ${pct(s, 90).toFixed(1)} ms, p99 ${pct(s, 99).toFixed(1)} ms, max ${(s[s.length - 1] ?? NaN).toFixed(1)} ms (n=${s.length})`;
}

async function decision(client: Client, seed: number, cand: number[], claim: number[]): Promise<void> {
  let t = performance.now();
  const res = await client.getAllocationCandidates(query(seed));
  cand.push(performance.now() - t);
  const pick = res.allocationRequests[seed % Math.max(1, res.allocationRequests.length)];
  if (!pick) throw new Error('no candidates left');
  t = performance.now();
  await client.claim({
    consumer: { consumerUuid: randomUUID(), projectId: 'bench', userId: 'bench', consumerType: 'INSTANCE', allocations: pick.allocations },
    replace: false,
    group: undefined,
  });
  claim.push(performance.now() - t);
}

/** CPU ms (user + system) the process has used: less sensitive than latency to a loaded machine. */
function cpuMs(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function waitReady(client: Client, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`placement exited with ${child.exitCode}`);
    try {
      await client.getAllocationCandidates(query(1));
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

async function main(): Promise<void> {
  const providers = Number(arg('providers', '10000'));
  const decisions = Number(arg('decisions', '300'));
  const clients = Number(arg('clients', '4'));
  const mainJs = arg('main', join(__dirname, '../../dist/main.js'));
  const port = Number(arg('port', '15778'));
  const db = await createTestDatabase({ prefix: 'bench_grpc_cand' });
  let child: ChildProcess | null = null;
  let client: Client | null = null;
  try {
    const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
    child = spawn(process.execPath, [...nodeArgs, mainJs], {
      env: {
        ...process.env,
        CELLSCHED_PLACEMENT_DB_URL: db.url,
        CELLSCHED_PLACEMENT_PORT: String(port),
        CELLSCHED_PLACEMENT_GRPC_PORT: String(port + 1),
        CELLSCHED_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    client = createGrpcClient(PlacementServiceClient, { addresses: [`127.0.0.1:${port + 1}`], deadlineMs: 60_000, maxAttempts: 1 });
    await waitReady(client, child);
    await db.pool.query(FILL.replace('$N', String(providers)));
    const t0 = performance.now();
    await client.getAllocationCandidates(query(2));
    console.log(
      `${mainJs}: ${providers} providers; first candidates after the load ${(performance.now() - t0).toFixed(0)} ms; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const cand: number[] = [];
    const claim: number[] = [];
    const c = client;
    const pid = child.pid;
    let seed = 10;
    let t = performance.now();
    let cpu = cpuMs(pid);
    for (let i = 0; i < decisions; i++) await decision(c, seed++, cand, claim);
    let secs = (performance.now() - t) / 1000;
    const perDecision = (): string => `placement CPU ${((cpuMs(pid) - cpu) / decisions).toFixed(1)} ms/decision`;
    console.log(
      `  sequential: ${(decisions / secs).toFixed(0)} decisions/s; ${perDecision()}; candidates ${stats(cand)}; claim ${stats(claim)}`,
    );
    cand.length = 0;
    claim.length = 0;
    t = performance.now();
    cpu = cpuMs(pid);
    let left = decisions;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (left-- > 0) await decision(c, seed++, cand, claim);
      }),
    );
    secs = (performance.now() - t) / 1000;
    console.log(
      `  ${clients} clients: ${(decisions / secs).toFixed(0)} decisions/s; ${perDecision()}; candidates ${stats(cand)}; claim ${stats(claim)}; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    client?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await db.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
