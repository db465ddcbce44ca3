// What placement, the migrations and the computes' guests must look like at quiescence once
// servers move (issue 13), as pure functions of facts read from outside (cell DBs, placement's
// REST API, the computes' /guests, os-services). invariants.ts reads the facts and reports.
//
// Holdings (Nova's, with one migration consumer where Nova doubles the instance's for an evacuation):
//   instance  ACTIVE, SHUTOFF, VERIFY_RESIZE (and SHELVED, PAUSED, SUSPENDED, RESCUE): its current
//             flavor on its current node; an ERROR one that once launched (a failed move or rebuild
//             left it on its host) likewise; a build that never launched (ERROR), SHELVED_OFFLOADED
//             and a deleted one: nothing.
//   migration 'finished' (cold migrate/resize awaiting confirm or revert): the old flavor on the source
//             node; 'done' (evacuation) while its source compute is not back: the flavor on the source
//             node; anything else: nothing (a final one holding something is a leak).
import { flavorResources } from './util';

export interface FlavorJson {
  vcpus?: number;
  memoryMb?: number;
  rootGb?: number;
  ephemeralGb?: number;
  swap?: number;
}

/** One instance row of a cell DB (or cell 0). */
export interface InstanceFacts {
  uuid: string;
  cell: string;
  vmState: string;
  taskState: string | null;
  host: string | null;
  node: string | null;
  flavor: FlavorJson;
  /** Nova's instance_extra.old_flavor (set from resize to confirm/revert). */
  oldFlavor: FlavorJson | null;
  /** launched_at is set: the instance ran once (a build that failed never did). */
  launched: boolean;
  deleted: boolean;
}

/** One migration record of a cell DB. */
export interface MigrationFacts {
  uuid: string;
  cell: string;
  instanceUuid: string;
  type: string;
  status: string;
  sourceCompute: string | null;
  sourceNode: string | null;
  destCompute: string | null;
  destNode: string | null;
  /** Epoch ms. */
  createdAt: number;
  /** Soft-deleted (Nova soft-deletes an instance's migrations with the instance). */
  deleted: boolean;
}

/** Nova's final migration statuses ('cancelled' ends an aborted live migration). */
export const FINAL_MIGRATION_STATUSES: readonly string[] = ['confirmed', 'reverted', 'completed', 'error', 'failed', 'cancelled'];
/** In-progress statuses: none may be left at quiescence. */
export const IN_PROGRESS_MIGRATION_STATUSES: readonly string[] = [
  'pre-migrating',
  'migrating',
  'post-migrating',
  'preparing',
  'running',
  'accepted',
  'confirming',
  'reverting',
  'queued',
];
/** vm_states of an instance that is on its host (a guest there, its resources held). */
export const ON_HOST_VM_STATES: readonly string[] = ['active', 'stopped', 'resized', 'shelved', 'paused', 'suspended', 'rescued'];
/** API statuses a server may rest in (with no task_state): everything else is on its way somewhere. */
export const SETTLED_STATUSES: readonly string[] = [
  'ACTIVE',
  'ERROR',
  'SHUTOFF',
  'VERIFY_RESIZE',
  'SHELVED',
  'SHELVED_OFFLOADED',
  'PAUSED',
  'SUSPENDED',
  'RESCUE',
];

export const isFinal = (status: string): boolean => FINAL_MIGRATION_STATUSES.includes(status);

/** A server view that is not at rest: why (status and task_state), or undefined when settled. Pure. */
export function unsettled(s: { status: string; 'OS-EXT-STS:task_state'?: string | null }): string | undefined {
  const task = s['OS-EXT-STS:task_state'] ?? null;
  if (SETTLED_STATUSES.includes(s.status) && task === null) return undefined;
  return task === null ? s.status : `${s.status}/${task}`;
}

/** Whether the instance holds its flavor on its node (see the header). Pure. */
export function holdsOnHost(i: InstanceFacts): boolean {
  if (i.deleted || (i.node ?? i.host) === null) return false;
  return ON_HOST_VM_STATES.includes(i.vmState) || (i.vmState === 'error' && i.launched);
}

/** Is the host's compute service back (up: heard from recently and not forced down)? */
export type SourceBack = (host: string | null) => boolean;

/**
 * Why a non-final migration may legitimately wait at quiescence ('confirm': a resize in
 * VERIFY_RESIZE; 'source': an evacuation whose source is not back yet), or undefined. Pure.
 */
export function awaiting(m: MigrationFacts, instance: InstanceFacts | undefined, sourceBack: SourceBack): 'confirm' | 'source' | undefined {
  if (m.deleted || instance === undefined || instance.deleted) return undefined;
  if (m.status === 'finished' && (m.type === 'migration' || m.type === 'resize') && instance.vmState === 'resized') return 'confirm';
  if (m.status === 'done' && m.type === 'evacuation' && !sourceBack(m.sourceCompute)) return 'source';
  return undefined;
}

/** What one consumer must hold: provider name → resources, and what it is (for messages). */
export interface Holding {
  what: string;
  providers: Map<string, Record<string, number>>;
}

const add = (into: Map<string, Record<string, number>>, provider: string, r: Record<string, number>): void => {
  const acc = { ...(into.get(provider) ?? {}) };
  for (const [k, v] of Object.entries(r)) acc[k] = (acc[k] ?? 0) + v;
  into.set(provider, acc);
};

/** Every consumer that must hold something, with exactly what (see the header). Pure. */
export function expectedHoldings(
  instances: readonly InstanceFacts[],
  migrations: readonly MigrationFacts[],
  sourceBack: SourceBack,
): Map<string, Holding> {
  const out = new Map<string, Holding>();
  const byUuid = new Map(instances.filter((i) => !i.deleted).map((i) => [i.uuid, i]));
  for (const i of byUuid.values()) {
    if (!holdsOnHost(i)) continue;
    const providers = new Map<string, Record<string, number>>();
    add(providers, i.node ?? i.host ?? '', flavorResources(i.flavor));
    out.set(i.uuid, { what: `instance ${i.vmState} on ${i.node ?? i.host ?? '-'}`, providers });
  }
  for (const m of migrations) {
    const i = byUuid.get(m.instanceUuid);
    const why = awaiting(m, i, sourceBack);
    if (why === undefined || i === undefined) continue;
    const flavor = why === 'confirm' ? (i.oldFlavor ?? i.flavor) : i.flavor;
    const providers = new Map<string, Record<string, number>>();
    add(providers, m.sourceNode ?? m.sourceCompute ?? '', flavorResources(flavor));
    out.set(m.uuid, { what: `${m.type} ${m.status} of ${m.instanceUuid} (source ${m.sourceNode ?? m.sourceCompute ?? '-'})`, providers });
  }
  return out;
}

const sameResources = (a: Record<string, number>, b: Record<string, number>): boolean => {
  const ka = Object.keys(a)
    .filter((k) => a[k] !== 0)
    .sort();
  const kb = Object.keys(b)
    .filter((k) => b[k] !== 0)
    .sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
};
export const fmtResources = (r: Record<string, number>): string =>
  Object.entries(r)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/**
 * Per consumer: each expected consumer holds exactly its resources on exactly its providers;
 * every other consumer is a leak (`describe` says what it is). Consumers in `skip` (still
 * settling) are not judged. Pure.
 */
export function consumerProblems(
  expected: ReadonlyMap<string, Holding>,
  actual: ReadonlyMap<string, ReadonlyMap<string, Record<string, number>>>,
  skip: ReadonlySet<string>,
  describe: (consumer: string) => string,
): string[] {
  const problems: string[] = [];
  for (const [consumer, want] of expected) {
    if (skip.has(consumer)) continue;
    const got = actual.get(consumer);
    if (got === undefined) {
      problems.push(`${consumer}: ${want.what} with no allocation (missing)`);
      continue;
    }
    for (const [rp, r] of want.providers) {
      const mine = got.get(rp);
      if (mine === undefined)
        problems.push(`${consumer}: ${want.what} but nothing allocated on ${rp} (allocated on ${[...got.keys()].join(',')})`);
      else if (!sameResources(mine, r))
        problems.push(`${consumer}: ${want.what}: allocation on ${rp} ${fmtResources(mine)} ≠ ${fmtResources(r)}`);
    }
    const others = [...got.keys()].filter((p) => !want.providers.has(p));
    if (others.length) problems.push(`${consumer}: ${want.what} but also allocated on ${others.join(',')}`);
  }
  for (const [consumer, m] of actual) {
    if (expected.has(consumer) || skip.has(consumer)) continue;
    problems.push(`${consumer}: allocation on ${[...m.keys()].join(',')} but ${describe(consumer)} (leaked)`);
  }
  return problems;
}

/** Per provider: its usages are the sum of what its expected consumers hold there. Pure. */
export function providerProblems(expected: ReadonlyMap<string, Holding>, usages: ReadonlyMap<string, Record<string, number>>): string[] {
  const want = new Map<string, Record<string, number>>();
  for (const h of expected.values()) for (const [rp, r] of h.providers) add(want, rp, r);
  const problems: string[] = [];
  for (const [rp, used] of usages) {
    const w = want.get(rp) ?? {};
    if (!sameResources(used, w))
      problems.push(`provider ${rp}: usages ${fmtResources(used) || 'none'} ≠ its instances' and migrations' ${fmtResources(w) || 'none'}`);
  }
  return problems;
}

/** What a consumer that holds nothing legitimately is (for a leak's message). Pure. */
export function describeConsumer(
  consumer: string,
  instances: ReadonlyMap<string, InstanceFacts>,
  migrations: ReadonlyMap<string, MigrationFacts>,
  everSeen: ReadonlySet<string>,
): string {
  const m = migrations.get(consumer);
  if (m !== undefined) {
    const i = instances.get(m.instanceUuid);
    return `it is the ${m.type} ${m.status}${m.deleted ? ' (deleted)' : ''} of ${m.instanceUuid} (${i === undefined || i.deleted ? 'deleted' : i.vmState}), which holds nothing`;
  }
  const i = instances.get(consumer);
  if (i !== undefined && !i.deleted) return `the instance is ${i.vmState}${i.host ? ` on ${i.host}` : ''}`;
  return everSeen.has(consumer) ? 'the instance is deleted' : 'no instance or migration';
}

/**
 * migrations-final: every migration of `created` (those created during the scenario) is final,
 * or waits legitimately ('finished' in VERIFY_RESIZE, 'done' while its source is not back);
 * a deleted instance's migration is final or soft-deleted with it; one instance has at most one
 * migration in progress. Pure.
 */
export function migrationProblems(
  created: readonly MigrationFacts[],
  instances: ReadonlyMap<string, InstanceFacts>,
  sourceBack: SourceBack,
  boundS: number,
): string[] {
  const problems: string[] = [];
  const open = new Map<string, MigrationFacts[]>();
  for (const m of created) {
    if (isFinal(m.status)) continue;
    const i = instances.get(m.instanceUuid);
    const label = `${m.uuid} (${m.type} of ${m.instanceUuid}, ${m.sourceCompute ?? '-'} → ${m.destCompute ?? '-'})`;
    if (i === undefined || i.deleted) {
      if (!m.deleted) problems.push(`${label}: left ${m.status} though its instance is deleted`);
      continue;
    }
    open.set(m.instanceUuid, [...(open.get(m.instanceUuid) ?? []), m]);
    if (awaiting(m, i, sourceBack) !== undefined) continue;
    if (m.status === 'finished')
      problems.push(`${label}: finished but the instance is ${i.vmState}${i.taskState ? `/${i.taskState}` : ''}, not VERIFY_RESIZE`);
    else if (m.status === 'done' && m.type === 'evacuation')
      problems.push(
        `${label}: done but its source ${m.sourceCompute ?? '-'} is back and it is not completed ${boundS} s after the scenario`,
      );
    else problems.push(`${label}: left ${m.status} ${boundS} s after the scenario`);
  }
  for (const [uuid, ms] of open)
    if (ms.length > 1)
      problems.push(`${uuid}: ${ms.length} migrations not final at once (${ms.map((m) => `${m.type} ${m.status}`).join(', ')})`);
  return problems;
}

/**
 * single-host, from the computes' own guest lists: a guest is legitimate on its instance's
 * host while the instance is on a host (ON_HOST_VM_STATES, or ERROR after it launched), on the
 * source of a 'finished' resize in VERIFY_RESIZE (the source keeps the old guest until confirm,
 * as Nova's does), and on the source of a 'done' evacuation while that source is not back.
 * Anything else (a deleted, offloaded or never-launched instance's guest, a guest on another
 * host) is a ghost; an instance on two hosts is reported as such. Instances in `skip` are still
 * settling. Pure.
 */
export function guestProblems(
  guests: readonly { host: string; uuid: string }[],
  instances: ReadonlyMap<string, InstanceFacts>,
  migrations: readonly MigrationFacts[],
  sourceBack: SourceBack,
  skip: ReadonlySet<string>,
): string[] {
  const keptOnSource = new Set<string>();
  for (const m of migrations) {
    const why = awaiting(m, instances.get(m.instanceUuid), sourceBack);
    if (why !== undefined && m.sourceCompute !== null) keptOnSource.add(`${m.sourceCompute}/${m.instanceUuid}`);
  }
  const problems: string[] = [];
  const hostsOf = new Map<string, string[]>();
  for (const g of guests) hostsOf.set(g.uuid, [...(hostsOf.get(g.uuid) ?? []), g.host]);
  for (const [uuid, hosts] of hostsOf) {
    if (skip.has(uuid)) continue;
    const i = instances.get(uuid);
    const legit = (h: string): boolean =>
      i !== undefined && !i.deleted && ((h === i.host && holdsOnHost(i)) || keptOnSource.has(`${h}/${uuid}`));
    const bad = hosts.filter((h) => !legit(h));
    if (bad.length === 0) continue;
    const state =
      i === undefined || i.deleted ? 'deleted or absent' : `${i.vmState}${i.taskState ? `/${i.taskState}` : ''} on ${i.host ?? '-'}`;
    if (hosts.length > 1) problems.push(`${uuid}: runs on ${hosts.join(' and ')} (computes' guests) but the instance is ${state}`);
    else problems.push(`${uuid}: runs on ${hosts[0] ?? '-'} (compute's guests) but the instance is ${state}`);
  }
  return problems;
}
