/**
 * Timings of one target: sequential query latency, concurrent throughput, claim storm.
 */
import { randomUUID } from 'node:crypto';
import { pool, type PlacementHttp } from './http';

/** Latency statistics in seconds. */
export interface Stats {
  readonly n: number;
  readonly median: number;
  readonly p99: number;
  readonly min: number;
  readonly max: number;
}

/** Median and nearest-rank p99 of a sample. */
export function stats(xs: readonly number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
  const mid = s.length % 2 === 1 ? (s[(s.length - 1) / 2] ?? NaN) : ((s[s.length / 2 - 1] ?? 0) + (s[s.length / 2] ?? 0)) / 2;
  return { n: s.length, median: mid, p99: at(0.99), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}

/** `reps` sequential GETs of `path`; the last body is kept for comparisons. */
export async function timedGets(http: PlacementHttp, path: string, reps: number): Promise<{ stats: Stats; body: string }> {
  const times: number[] = [];
  let body = '';
  for (let i = 0; i < reps; i++) {
    const r = await http.must('GET', path);
    times.push(r.seconds);
    body = r.body;
  }
  return { stats: stats(times), body };
}

/**
 * `reps` sequential GETs of `path`, each with a different, result-neutral `limit` (above
 * any candidate count): no two requests are identical, so no response cache can answer.
 */
export async function timedDistinctGets(http: PlacementHttp, path: string, reps: number): Promise<Stats> {
  const times: number[] = [];
  for (let i = 0; i < reps; i++)
    times.push((await http.must('GET', `${path}&limit=${10_000_000 + i + Math.floor(Math.random() * 1e6)}`)).seconds);
  return stats(times);
}

/** `total` GETs from `clients` concurrent clients (like `ab -c clients -n total`). */
export async function concurrentGets(
  http: PlacementHttp,
  path: string,
  clients: number,
  total: number,
): Promise<{ rps: number; stats: Stats }> {
  const times: number[] = [];
  const started = Date.now();
  await pool(
    Array.from({ length: total }, (_, i) => i),
    clients,
    async () => {
      times.push((await http.must('GET', path)).seconds);
    },
  );
  return { rps: total / ((Date.now() - started) / 1000), stats: stats(times) };
}

/** One claim: a consumer and the allocations it writes. */
export interface ClaimPlan {
  readonly consumer: string;
  readonly allocations: Record<string, { resources: Record<string, number> }>;
}

/** Claims for `count` new consumers, taken round-robin from the candidates of `body`. */
export function planClaims(body: string, count: number): ClaimPlan[] {
  const ars = (JSON.parse(body) as { allocation_requests: { allocations: ClaimPlan['allocations'] }[] }).allocation_requests;
  if (ars.length === 0) return [];
  return Array.from({ length: count }, (_, i) => ({
    consumer: randomUUID(),
    allocations: (ars[i % ars.length] as { allocations: ClaimPlan['allocations'] }).allocations,
  }));
}

/** PUT /allocations/{consumer} for every plan from `clients` clients; claims/s and outcomes. */
export async function claimStorm(
  http: PlacementHttp,
  plans: readonly ClaimPlan[],
  clients: number,
): Promise<{ cps: number; ok: number; conflicts: number; stats: Stats }> {
  const times: number[] = [];
  let ok = 0;
  let conflicts = 0;
  const started = Date.now();
  await pool(plans, clients, async (p) => {
    const body = {
      allocations: p.allocations,
      project_id: 'bench-project',
      user_id: 'bench-user',
      consumer_generation: null,
      consumer_type: 'TEST',
    };
    const r = await http.req('PUT', `/allocations/${p.consumer}`, body);
    times.push(r.seconds);
    if (r.status === 204) ok++;
    else if (r.status === 409) conflicts++;
    else throw new Error(`claim ${p.consumer} -> ${r.status} ${r.body.slice(0, 200)}`);
  });
  return { cps: plans.length / ((Date.now() - started) / 1000), ok, conflicts, stats: stats(times) };
}
