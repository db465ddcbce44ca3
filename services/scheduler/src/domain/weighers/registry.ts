import { InvalidSchedulerPolicy } from '../errors';
import { buildFailureWeigher } from './build-failure-weigher';
import { cpuWeigher } from './cpu-weigher';
import { crossCellWeigher } from './cross-cell-weigher';
import { diskWeigher } from './disk-weigher';
import { ioOpsWeigher } from './io-ops-weigher';
import { ramWeigher } from './ram-weigher';
import { serverGroupSoftAffinityWeigher } from './server-group-soft-affinity-weigher';
import { serverGroupSoftAntiAffinityWeigher } from './server-group-soft-anti-affinity-weigher';
import type { HostWeigher } from './types';

/** Every weigher this scheduler knows, keyed by Nova's class name (the `weight_classes` values). */
export const WEIGHER_REGISTRY: ReadonlyMap<string, HostWeigher> = new Map(
  [
    ramWeigher,
    cpuWeigher,
    diskWeigher,
    ioOpsWeigher,
    buildFailureWeigher,
    serverGroupSoftAffinityWeigher,
    serverGroupSoftAntiAffinityWeigher,
    crossCellWeigher,
  ].map((w) => [w.name, w]),
);

/** Unknown weigher names and multiplier options that no enabled weigher reads. */
export function weigherProblems(
  names: readonly string[],
  multipliers: Readonly<Record<string, number>>,
  registry: ReadonlyMap<string, HostWeigher> = WEIGHER_REGISTRY,
): string[] {
  const problems = names.filter((n) => !registry.has(n)).map((n) => `weight_classes: unknown weigher ${n}`);
  const options = new Set([...registry.values()].map((w) => w.multiplierOption));
  for (const key of Object.keys(multipliers)) if (!options.has(key)) problems.push(`unknown weight multiplier option ${key}`);
  return problems;
}

/** Resolves `weight_classes` in order. Throws InvalidSchedulerPolicy listing every problem. */
export function resolveWeighers(
  names: readonly string[],
  multipliers: Readonly<Record<string, number>>,
  registry: ReadonlyMap<string, HostWeigher> = WEIGHER_REGISTRY,
): HostWeigher[] {
  const problems = weigherProblems(names, multipliers, registry);
  if (problems.length > 0) throw new InvalidSchedulerPolicy(problems);
  return names.map((n) => registry.get(n) as HostWeigher);
}
