/**
 * `--stages`: where one decision's time goes, stage by stage, against the same cloud as the
 * benchmark (placement as its own process, one scheduler replica): placement's candidates query
 * on an unchanged database and right after a write, a bare Claim (replace=true, as the scheduler
 * sends it), a Release, and a whole SelectDestinations, each timed serially (no queueing) and then
 * `clients` at a time. Medians in ms.
 */
import { randomUUID } from 'node:crypto';
import { createGrpcClient } from '../../../packages/grpc/src/index';
import { type GetAllocationCandidatesRequest, PlacementServiceClient } from '../../../packages/wire/src/index';
import type { BenchCloud } from './cloud';
import { clientsFor, decide } from './measure';

type Timed = () => Promise<unknown>;

async function median(n: number, concurrency: number, f: Timed): Promise<number> {
  const ms: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < n) {
      const t = performance.now();
      const r = await f();
      ms.push(typeof r === 'number' ? r : performance.now() - t); // a stage may time itself (its setup excluded)
    }
  }));
  ms.sort((a, b) => a - b);
  return ms[Math.floor(ms.length / 2)] ?? 0;
}

function query(limit: number): GetAllocationCandidatesRequest {
  return {
    groups: [{ suffix: '', resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 }, required: [], forbidden: [], memberOf: [], forbiddenMemberOf: [], inTree: '' }],
    groupPolicy: '', limit, rootRequired: [], rootForbidden: ['COMPUTE_STATUS_DISABLED'], sameSubtree: [], seed: 1,
  };
}

/** Runs the probe; prints one line per stage and returns the figures. */
export async function stages(cloud: BenchCloud, limit: number, clients: number, env: Record<string, string>): Promise<Record<string, number>> {
  const placement = createGrpcClient(PlacementServiceClient, { addresses: [cloud.placementGrpc], deadlineMs: 60_000, maxAttempts: 1 });
  const [scheduler] = clientsFor(await cloud.startReplicas(1, env));
  try {
    const first = await placement.getAllocationCandidates(query(limit));
    const candidates = first.allocationRequests;
    let i = 0;
    const claim = async (): Promise<string> => {
      const consumer = randomUUID();
      const c = candidates[i++ % candidates.length];
      await placement.claim({ consumer: { consumerUuid: consumer, projectId: 'bench', userId: 'bench', consumerType: 'INSTANCE', consumerGeneration: 0,
        allocations: (c?.allocations ?? []).map((a) => ({ resourceProviderUuid: a.resourceProviderUuid, resources: { ...a.resources } })) }, replace: true });
      return consumer;
    };
    const out: Record<string, number> = {};
    const put = (k: string, v: number): void => {
      out[k] = Number(v.toFixed(2));
      process.stderr.write(`stage ${k}: ${v.toFixed(2)} ms\n`);
    };
    await median(20, 1, () => placement.getAllocationCandidates(query(limit)));
    put(`candidates_unchanged_limit_${limit}`, await median(20, 1, () => placement.getAllocationCandidates(query(limit))));
    put(`candidates_after_write_limit_${limit}`, await median(10, 1, async () => {
      await claim();
      const t = performance.now();
      await placement.getAllocationCandidates(query(limit));
      return performance.now() - t;
    }));
    put('candidates_after_write_incl_claim', await median(10, 1, async () => {
      await claim();
      await placement.getAllocationCandidates(query(limit));
    }));
    put('claim_serial', await median(100, 1, claim));
    put(`claim_${clients}_concurrent`, await median(300, clients, claim));
    put('release_serial', await median(50, 1, async () => placement.release({ consumerUuids: [await claim()] })));
    const s = scheduler as NonNullable<typeof scheduler>;
    for (let k = 0; k < 20; k++) await decide(s, k + 1);
    put('select_destinations_serial', await median(100, 1, async () => decide(s, i++)));
    put(`select_destinations_${clients}_concurrent`, await median(300, clients, async () => decide(s, i++)));
    return out;
  } finally {
    placement.close();
    scheduler?.close();
    await cloud.stopReplicas();
  }
}
