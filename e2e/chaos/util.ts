// Small pure pieces of the runner and the monitor (unit-tested in chaos.test.ts).
import { createHash } from 'node:crypto';

/** `90s`, `30m`, `1h`, `1500ms`, or a bare number of seconds → ms. */
export function parseDuration(v: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v);
  if (!m) throw new Error(`--duration: expected e.g. 90s, 30m, 1h; got ${v}`);
  const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = Number(m[1]) * mult;
  if (!(ms > 0)) throw new Error(`--duration must be positive; got ${v}`);
  return ms;
}

/** A scenario's seed: from the run's seed, its name and its iteration (so --only X --seed S repeats X's). */
export function scenarioSeed(runSeed: number, name: string, iteration: number): number {
  return createHash('sha256').update(`${runSeed}:${name}:${iteration}`).digest().readUInt32BE(0);
}

/**
 * `ss -tnpH state established '( dport = :5432 or dport = :5672 )'` output → `<server port>:<client port>` → pid.
 * Keyed by both ports: one client port number can be in use towards PostgreSQL and RabbitMQ by two processes at once.
 */
export function parseSocketOwners(ssOutput: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of ssOutput.split('\n')) {
    const conn = /\s(\S+):(\d+)\s+\S+:(5432|5672)\s/.exec(line);
    const pid = /pid=(\d+)/.exec(line);
    if (conn?.[2] && conn[3] && pid?.[1]) m.set(`${conn[3]}:${conn[2]}`, Number(pid[1]));
  }
  return m;
}

/** The resources an instance of this flavor holds in placement (Nova's resources_from_flavor: swap MB rounded up to GB joins DISK_GB). */
export function flavorResources(f: {
  vcpus?: number;
  memoryMb?: number;
  rootGb?: number;
  ephemeralGb?: number;
  swap?: number;
}): Record<string, number> {
  const out: Record<string, number> = {};
  if (f.vcpus) out.VCPU = f.vcpus;
  if (f.memoryMb) out.MEMORY_MB = f.memoryMb;
  const disk = (f.rootGb ?? 0) + (f.ephemeralGb ?? 0) + Math.ceil((f.swap ?? 0) / 1024);
  if (disk) out.DISK_GB = disk;
  return out;
}

/** A soak's order: the move scenarios interleaved with the others (b1, m1, b2, m2, ...), each list in its own order. Pure. */
export function soakOrder<T extends { moves?: boolean }>(scenarios: readonly T[]): T[] {
  const moves = scenarios.filter((s) => s.moves === true);
  const builds = scenarios.filter((s) => s.moves !== true);
  const out: T[] = [];
  for (let i = 0; i < Math.max(moves.length, builds.length); i++) {
    const b = builds[i];
    const m = moves[i];
    if (b !== undefined) out.push(b);
    if (m !== undefined) out.push(m);
  }
  return out;
}
