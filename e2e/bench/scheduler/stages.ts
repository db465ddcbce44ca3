/**
 * `--stages`: where one decision's time goes, stage by stage, against the same cloud as the
 * benchmark (placement as its own process, one scheduler replica): placement's candidates query
 * on an unchanged database and right after a write, a bare Claim (replace=true, as the scheduler
 * sends it), a Release, and a whole SelectDestinations, each timed serially (no queueing) and then
 * `clients` at a time. Medians in ms.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createGrpcClient } from '../../../packages/grpc/src/index';
import { type GetAllocationCandidatesRequest, PlacementServiceClient } from '../../../packages/wire/src/index';
import type { BenchCloud } from './cloud';
import { clientsFor, decide } from './measure';

type Timed = () => Promise<unknown>;

/** CPU time (user + system, ms) used so far by these processes, from /proc (Linux; 0 elsewhere). */
export function cpuMs(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {
      // gone: counts nothing
    }
  }
  return ticks * 10; // USER_HZ = 100
}

/** The PostgreSQL backends serving these databases (their CPU is the SQL cost). */
export async function backendPids(cloud: BenchCloud, ...dbs: string[]): Promise<number[]> {
  const r = await cloud.placementDb.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = ANY($1::text[])', [dbs]);
  return r.rows.map((x) => x.pid);
}

/** Database name of a connection URL. */
export const dbNameOf = (url: string): string => new URL(url).pathname.slice(1);

/** CPU (ms) used so far by each part of the system under test: replicas, placement, PostgreSQL for placement, for the cells and API. */
export async function systemCpu(
  cloud: BenchCloud,
): Promise<{ scheduler: number; placement: number; pgPlacement: number; pgCells: number }> {
  const cellDbs = [cloud.apiDb.url, ...cloud.cells.map((c) => c.db.url)].map(dbNameOf);
  return {
    scheduler: cpuMs(cloud.pids.replicas),
    placement: cpuMs([cloud.pids.placement ?? 0]),
    pgPlacement: cpuMs(await backendPids(cloud, dbNameOf(cloud.placementDb.url))),
    pgCells: cpuMs(await backendPids(cloud, ...cellDbs)),
  };
}

async function median(n: number, concurrency: number, f: Timed): Promise<number> {
  const ms: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) {
        const t = performance.now();
        const r = await f();
        ms.push(typeof r === 'number' ? r : performance.now() - t); // a stage may time itself (its setup excluded)
      }
    }),
  );
  ms.sort((a, b) => a - b);
  return ms[Math.floor(ms.length / 2)] ?? 0;
}

function query(limit: number): GetAllocationCandidatesRequest {
  return {
    groups: [
      {
        suffix: '',
        resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 },
        required: [],
        forbidden: [],
        memberOf: [],
        forbiddenMemberOf: [],
        inTree: '',
      },
    ],
    groupPolicy: '',
    limit,
    rootRequired: [],
    rootForbidden: ['COMPUTE_STATUS_DISABLED'],
    sameSubtree: [],
    seed: 1,
  };
}

/** Runs the probe; prints one line per stage and returns the figures. */
export async function stages(
  cloud: BenchCloud,
  limit: number,
  clients: number,
  env: Record<string, string>,
): Promise<Record<string, number>> {
  const placement = createGrpcClient(PlacementServiceClient, { addresses: [cloud.placementGrpc], deadlineMs: 60_000, maxAttempts: 1 });
  const [scheduler] = clientsFor(await cloud.startReplicas(1, env));
  try {
    const first = await placement.getAllocationCandidates(query(limit));
    const candidates = first.allocationRequests;
    let i = 0;
    const claim = async (): Promise<string> => {
      const consumer = randomUUID();
      const c = candidates[i++ % candidates.length];
      await placement.claim({
        consumer: {
          consumerUuid: consumer,
          projectId: 'bench',
          userId: 'bench',
          consumerType: 'INSTANCE',
          consumerGeneration: 0,
          allocations: (c?.allocations ?? []).map((a) => ({ resourceProviderUuid: a.resourceProviderUuid, resources: { ...a.resources } })),
        },
        replace: true,
        group: undefined,
      });
      return consumer;
    };
    const out: Record<string, number> = {};
    const put = (k: string, v: number): void => {
      out[k] = Number(v.toFixed(2));
      process.stderr.write(`stage ${k}: ${v.toFixed(2)} ms\n`);
    };
    await median(20, 1, () => placement.getAllocationCandidates(query(limit)));
    put(`candidates_unchanged_limit_${limit}`, await median(20, 1, () => placement.getAllocationCandidates(query(limit))));
    put(
      `candidates_after_write_limit_${limit}`,
      await median(10, 1, async () => {
        await claim();
        const t = performance.now();
        await placement.getAllocationCandidates(query(limit));
        return performance.now() - t;
      }),
    );
    put(
      'candidates_after_write_incl_claim',
      await median(10, 1, async () => {
        await claim();
        await placement.getAllocationCandidates(query(limit));
      }),
    );
    put('claim_serial', await median(100, 1, claim));
    const dbName = dbNameOf(cloud.placementDb.url);
    const cpuOf = async (): Promise<[number, number]> => [cpuMs([cloud.pids.placement ?? 0]), cpuMs(await backendPids(cloud, dbName))];
    const [pl0, pg0] = await cpuOf();
    put(`claim_${clients}_concurrent`, await median(300, clients, claim));
    const [pl1, pg1] = await cpuOf();
    put('claim_cpu_ms_placement', (pl1 - pl0) / 300);
    put('claim_cpu_ms_postgres', (pg1 - pg0) / 300);
    put('release_serial', await median(50, 1, async () => placement.release({ consumerUuids: [await claim()] })));
    const s = scheduler as NonNullable<typeof scheduler>;
    for (let k = 0; k < 20; k++) await decide(s, k + 1);
    put('select_destinations_serial', await median(100, 1, async () => decide(s, i++)));
    const cpuAll = async (): Promise<[number, number, number]> => [
      cpuMs([cloud.pids.placement ?? 0]),
      cpuMs(await backendPids(cloud, dbName)),
      cpuMs(cloud.pids.replicas),
    ];
    const before = await cpuAll();
    put(`select_destinations_${clients}_concurrent`, await median(300, clients, async () => decide(s, i++)));
    const after = await cpuAll();
    put('decision_cpu_ms_placement', (after[0] - before[0]) / 300);
    put('decision_cpu_ms_postgres_placement_db', (after[1] - before[1]) / 300);
    put('decision_cpu_ms_scheduler', (after[2] - before[2]) / 300);
    return out;
  } finally {
    placement.close();
    scheduler?.close();
    await cloud.stopReplicas();
  }
}
