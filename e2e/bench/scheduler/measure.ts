/**
 * Load generation against the SchedulerService: closed-loop clients spread over the replicas,
 * latency of each SelectDestinations (claim included) and decisions per second.
 */
import { randomUUID } from 'node:crypto';
import { createGrpcClient, type GrpcClient } from '../../../packages/grpc/src/index';
import { FAILURE_CODES, SchedulerServiceClient, type RequestSpec } from '../../../packages/wire/src/index';

export type SchedulerClient = GrpcClient<typeof SchedulerServiceClient.service>;

/** Latency percentiles (ms) and throughput of one run. */
export interface RunStats {
  decisions: number;
  noValidHost: number;
  errors: number;
  p50: number;
  p99: number;
  perSecond: number;
  claimRetries: number;
  /** CPU ms per decision of each part (replicas, placement, PostgreSQL for placement, for cells + API), when measured. */
  cpuPerDecision?: Record<string, number>;
}

export function spec(seed: number): RequestSpec {
  return {
    instanceUuid: '',
    projectId: 'bench',
    userId: 'bench',
    numInstances: 1,
    availabilityZone: '',
    instanceGroup: undefined,
    flavor: { id: 0, flavorid: 'b1', name: 'bench.tiny', vcpus: 1, memoryMb: 512, rootGb: 1, ephemeralGb: 0, swap: 0, extraSpecs: {} },
    image: { id: 'img', name: 'cirros', diskFormat: 'qcow2', sizeBytes: 0, properties: {} },
    schedulerHints: {},
    requestedDestination: undefined,
    ignoreHosts: [],
    seed,
    requestId: `req-${randomUUID()}`,
  };
}

export function clientsFor(addresses: readonly string[]): SchedulerClient[] {
  return addresses.map((a) => createGrpcClient(SchedulerServiceClient, { addresses: [a], deadlineMs: 120_000, maxAttempts: 1 }));
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** One SelectDestinations; classifies the outcome. */
export async function decide(
  client: SchedulerClient,
  seed: number,
  consumer: string = randomUUID(),
  numAlternates = 2,
): Promise<{ kind: 'ok' | 'no_valid_host' | 'error'; ms: number; retries: number; error?: string }> {
  const t = performance.now();
  try {
    const r = await client.selectDestinations({
      requestSpec: spec(seed),
      instanceUuids: [consumer],
      numAlternates,
      allocationRequestVersion: '1.36',
      move: undefined,
    });
    return { kind: 'ok', ms: performance.now() - t, retries: r.claimRetries };
  } catch (err) {
    const failure = (err as { failure?: { code: string; metadata?: Record<string, string> } }).failure;
    const kind = failure?.code === FAILURE_CODES.scheduler.noValidHost ? 'no_valid_host' : 'error';
    return { kind, ms: performance.now() - t, retries: Number(failure?.metadata?.claim_retries ?? 0), error: String(err) };
  }
}

/** `concurrency` closed-loop workers over the clients (round-robin) until `total` decisions are made. */
export async function closedLoop(
  clients: readonly SchedulerClient[],
  concurrency: number,
  total: number,
  seedBase: number,
): Promise<RunStats> {
  const latencies: number[] = [];
  let next = 0;
  let noValidHost = 0;
  let errors = 0;
  let claimRetries = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = next++; i < total; i = next++) {
        const r = await decide(clients[(w + i) % clients.length] as SchedulerClient, seedBase + i);
        latencies.push(r.ms);
        claimRetries += r.retries;
        if (r.kind === 'no_valid_host') noValidHost += 1;
        if (r.kind === 'error') {
          errors += 1;
          if (errors <= 3) process.stderr.write(`error: ${r.error}\n`);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    decisions: total,
    noValidHost,
    errors,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    perSecond: total / seconds,
    claimRetries,
  };
}
