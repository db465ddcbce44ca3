// The invariant checker: after a scenario, at quiescence, looking only from outside — the
// compute API, placement's REST API, the databases (as the superuser, read-only), the
// computes' control endpoints (their own record of what runs where), the broker's and
// PostgreSQL's connection tables (sampled during the run by Monitor).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { auditFindings, auditProblems } from './audit-check';
import { listServers, quiesceDetailed, type Ledger } from './context';
import { deadLettersSince } from './dead-letters';
import { serverGroupProblems, type HostedServer } from './group-invariant';
import type { Monitor } from './monitor';
import {
  awaiting,
  consumerProblems,
  describeConsumer,
  expectedHoldings,
  guestProblems,
  isFinal,
  migrationProblems,
  providerProblems,
  unsettled,
  type InstanceFacts,
  type MigrationFacts,
  type SourceBack,
} from './move-model';
import type { StackHandle } from './scenario';
import type { ChaosStack } from './stack';

export const INVARIANTS = [
  'settled',
  'dead-letters',
  'none-lost',
  'allocations-exact',
  'migrations-final',
  'capacity',
  'single-host',
  'isolation',
  'error-faults',
  'audit',
  'server-groups',
] as const;
export type InvariantName = (typeof INVARIANTS)[number];

export interface InvariantResult {
  name: InvariantName;
  ok: boolean;
  /** Violations (at most 20 shown, `count` has them all). */
  problems: string[];
  count: number;
}

export interface CheckOutcome {
  results: InvariantResult[];
  /** Totals of the scenario's servers (ledger) at quiescence. */
  stats: {
    accepted: number;
    deleted: number;
    active: number;
    error: number;
    errorInCell0: number;
    other: number;
    /** Compute build attempts of the scenario's servers, and how many of them failed (rescheduled or aborted). */
    attempts: number;
    failedAttempts: number;
    /** Casts dead-lettered during the scenario (each one's instances must have settled: invariant dead-letters). */
    deadLettered: number;
  };
}

type InstanceRow = InstanceFacts & { vm_state: string };
interface ApiServer {
  id: string;
  status: string;
  'OS-EXT-STS:task_state'?: string | null;
  fault?: { message?: string; code?: number; details?: string };
}

class Problems {
  readonly list: string[] = [];
  add(p: string): void {
    this.list.push(p);
  }
  result(name: InvariantName): InvariantResult {
    return { name, ok: this.list.length === 0, problems: this.list.slice(0, 20), count: this.list.length };
  }
}

/** Every instance row of every cell and cell 0 (deleted ones flagged). */
export async function instanceRows(stack: Pick<StackHandle, 'topology' | 'prefix' | 'query' | 'adminUrl'>): Promise<InstanceRow[]> {
  const topo = stack.topology();
  const dbs = [
    { name: 'cell0', db: `${stack.prefix}_cell0` },
    ...topo.cells.map((c) => ({ name: c.name, db: `${stack.prefix}_${c.name}` })),
  ];
  const out: InstanceRow[] = [];
  for (const d of dbs) {
    // NOTE: old_flavor through to_jsonb: the column comes with the moves (cell-db migration 006)
    const rows = await stack.query<Omit<InstanceFacts, 'cell'> & { vm_state: string }>(
      stack.adminUrl(d.db),
      `
      SELECT uuid::text, vm_state, vm_state AS "vmState", task_state AS "taskState", host, node, flavor, to_jsonb(i) -> 'old_flavor' AS "oldFlavor",
        launched_at IS NOT NULL AS launched, (deleted_at IS NOT NULL OR vm_state = 'deleted') AS deleted FROM instances i`,
    );
    for (const r of rows) out.push({ ...r, oldFlavor: r.oldFlavor ?? null, cell: d.name });
  }
  return out;
}

/** Every migration record of every cell (cell 0 has none). */
export async function migrationRows(stack: StackHandle): Promise<MigrationFacts[]> {
  const out: MigrationFacts[] = [];
  for (const c of stack.topology().cells) {
    const rows = await stack.query<Omit<MigrationFacts, 'cell' | 'createdAt'> & { createdAt: Date }>(
      stack.adminUrl(`${stack.prefix}_${c.name}`),
      `
      SELECT uuid::text, instance_uuid::text AS "instanceUuid", migration_type AS type, status, source_compute AS "sourceCompute", source_node AS "sourceNode",
        dest_compute AS "destCompute", dest_node AS "destNode", created_at AS "createdAt", deleted_at IS NOT NULL AS deleted FROM migrations`,
    );
    for (const r of rows) out.push({ ...r, createdAt: r.createdAt.getTime(), cell: c.name });
  }
  return out;
}

/** Whether each compute host's service is up (heard from recently and not forced down), from os-services. */
export async function sourceBackOf(stack: StackHandle): Promise<SourceBack> {
  const r = await stack.api<{ services: { host: string; state: string; forced_down?: boolean }[] }>(
    'GET',
    '/os-services?binary=nova-compute',
  );
  if (r.status !== 200) throw new Error(`GET /os-services: ${r.status}`);
  const up = new Set(r.body.services.filter((s) => s.state === 'up' && s.forced_down !== true).map((s) => s.host));
  return (host) => host !== null && up.has(host);
}

/**
 * Waits (until `until`) for every migration created since `since` to be final or to wait
 * legitimately (VERIFY_RESIZE, an evacuation's source not back); returns the migrations then.
 */
async function settleMigrations(
  stack: ChaosStack,
  since: number,
  until: number,
): Promise<{ migrations: MigrationFacts[]; sourceBack: SourceBack }> {
  for (;;) {
    const [migrations, rows, sourceBack] = [await migrationRows(stack), await instanceRows(stack), await sourceBackOf(stack)];
    const live = new Map(rows.filter((r) => !r.deleted).map((r) => [r.uuid, r]));
    const open = migrations.filter(
      (m) => m.createdAt >= since && !isFinal(m.status) && !m.deleted && awaiting(m, live.get(m.instanceUuid), sourceBack) === undefined,
    );
    if (open.length === 0 || Date.now() > until) return { migrations, sourceBack };
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Placement's allocations by consumer: provider name → resources (REST, like any client). */
async function allocations(
  stack: ChaosStack,
): Promise<{ byConsumer: Map<string, Map<string, Record<string, number>>>; providers: { uuid: string; name: string }[] }> {
  const rps = await stack.placement<{ resource_providers: { uuid: string; name: string }[] }>('GET', '/resource_providers');
  if (rps.status !== 200) throw new Error(`placement GET /resource_providers: ${rps.status}`);
  const byConsumer = new Map<string, Map<string, Record<string, number>>>();
  for (const rp of rps.body.resource_providers) {
    const r = await stack.placement<{ allocations: Record<string, { resources: Record<string, number> }> }>(
      'GET',
      `/resource_providers/${rp.uuid}/allocations`,
    );
    if (r.status === 404) continue; // deleted since it was listed: it holds nothing
    if (r.status !== 200) throw new Error(`placement GET allocations of ${rp.name}: ${r.status}`);
    for (const [consumer, a] of Object.entries(r.body.allocations)) {
      const m = byConsumer.get(consumer) ?? new Map<string, Record<string, number>>();
      m.set(rp.name, a.resources);
      byConsumer.set(consumer, m);
    }
  }
  return { byConsumer, providers: rps.body.resource_providers };
}

export interface CheckOptions {
  /** Bound of the wait for quiescence (ms). */
  settleMs: number;
  /** Where each service's log stood when the scenario began (the cell conductors' allocation audits since then are read: audit-check.ts). */
  logsFrom: Map<string, number>;
  /** When the scenario began (epoch ms): casts dead-lettered since then are its own. */
  since: number;
}

/** Waits for quiescence (bounded), then checks every invariant. */
export async function checkInvariants(stack: ChaosStack, ledger: Ledger, monitor: Monitor, o: CheckOptions): Promise<CheckOutcome> {
  const results: InvariantResult[] = [];

  // settled: every request at rest (no BUILD, no task_state, no build request or pending action), none stuck past the bound;
  // then (within what is left of the bound) every migration final or legitimately waiting
  const t0 = Date.now();
  const stuck = await quiesceDetailed(stack, o.settleMs);
  const { migrations, sourceBack } = await settleMigrations(stack, o.since, t0 + o.settleMs);
  const quiescedAt = Date.now();
  const settled = new Problems();
  for (const [id, why] of stuck) settled.add(`${id} not at rest (${why}) ${Math.round(o.settleMs / 1000)} s after the scenario`);
  results.push(settled.result('settled'));
  const stuckSet = new Set(stuck.keys());

  const servers = await listServers(stack);
  const apiById = new Map(servers.map((s) => [s.id, s as ApiServer]));

  // dead-letters: a cast dead-lettered during the run must not have left its instance unresolved
  const dead = await deadLettersSince(stack, o.since);
  const deadLetters = new Problems();
  for (const d of dead) {
    for (const id of d.instances) {
      const s = apiById.get(id);
      const status = s === undefined ? (await stack.api('GET', `/servers/${id}`)).status.toString() : (unsettled(s) ?? s.status);
      if (s === undefined ? status !== '404' : unsettled(s) !== undefined) {
        deadLetters.add(
          `${id}: its ${d.method} was dead-lettered from ${d.queue} (${d.code}: ${d.reason.slice(0, 200)}) and it is ${status}`,
        );
      }
    }
  }
  results.push(deadLetters.result('dead-letters'));

  const rows = await instanceRows(stack);
  const live = rows.filter((r) => !r.deleted);
  const byUuid = new Map<string, InstanceRow[]>();
  for (const r of live) byUuid.set(r.uuid, [...(byUuid.get(r.uuid) ?? []), r]);
  const apiDb = stack.adminUrl(`${stack.prefix}_api`);
  const mappings = await stack.query<{ instance_uuid: string; cell: string | null }>(
    apiDb,
    'SELECT m.instance_uuid::text, c.name AS cell FROM instance_mappings m LEFT JOIN cell_mappings c ON c.id = m.cell_id',
  );
  const mapped = new Map(mappings.map((m) => [m.instance_uuid, m.cell]));

  // none-lost: every 202 exists (API + a cell or cell 0, mapped there); every delete left nothing
  const lost = new Problems();
  const stats = {
    accepted: ledger.entries.size,
    deleted: ledger.deletedIds().length,
    active: 0,
    error: 0,
    errorInCell0: 0,
    other: 0,
    attempts: 0,
    failedAttempts: 0,
    deadLettered: dead.length,
  };
  for (const c of stack.topology().cells) {
    const ev = await stack.query<{ ok: boolean; n: string }>(
      stack.adminUrl(`${stack.prefix}_${c.name}`),
      `
      SELECT e.result = 'Success' AS ok, count(*) AS n FROM instance_actions a JOIN instance_actions_events e ON e.action_id = a.id
      WHERE a.instance_uuid = ANY($1::uuid[]) AND e.event = 'compute__do_build_and_run_instance' GROUP BY 1`,
      [[...ledger.entries.keys()]],
    );
    for (const r of ev) {
      stats.attempts += Number(r.n);
      if (!r.ok) stats.failedAttempts += Number(r.n);
    }
  }
  for (const id of ledger.liveIds()) {
    const s = apiById.get(id);
    const where = byUuid.get(id) ?? [];
    if (s === undefined) {
      const one = await stack.api<{ server?: ApiServer }>('GET', `/servers/${id}`);
      if (one.status !== 200) {
        lost.add(
          `${id}: accepted (202) but GET /servers/${id} is ${one.status} and the list does not show it (rows in: ${where.map((w) => w.cell).join(',') || 'no cell'})`,
        );
        continue;
      }
    }
    const status = s?.status ?? 'UNKNOWN';
    if (status === 'ACTIVE') stats.active++;
    else if (status === 'ERROR') {
      stats.error++;
      if (where[0]?.cell === 'cell0') stats.errorInCell0++;
    } else stats.other++;
    if (stuckSet.has(id)) continue;
    if (where.length === 0) lost.add(`${id}: ${status} in the API but no instance row in any cell or cell0`);
    else if (mapped.get(id) !== where[0]?.cell)
      lost.add(`${id}: instance in ${where.map((w) => w.cell).join(',')} but mapped to ${mapped.get(id) ?? 'nothing'}`);
  }
  for (const id of ledger.deletedIds()) {
    const g = await stack.api('GET', `/servers/${id}`);
    if (g.status !== 404) lost.add(`${id}: deleted (DELETE accepted) but GET answers ${g.status}`);
    if (byUuid.has(id))
      lost.add(
        `${id}: deleted but an undeleted instance row is left in ${byUuid
          .get(id)
          ?.map((w) => w.cell)
          .join(',')}`,
      );
  }
  const leftBuildRequests = await stack.query<{ instance_uuid: string }>(apiDb, 'SELECT instance_uuid::text FROM build_requests');
  for (const b of leftBuildRequests) if (!stuckSet.has(b.instance_uuid)) lost.add(`${b.instance_uuid}: build request left at quiescence`);
  results.push(lost.result('none-lost'));

  // allocations-exact: consumers = the instances on a host (current flavor, current node) and the migrations still
  // holding a source (VERIFY_RESIZE, an evacuation whose source is not back), exactly; per provider, usages = their sum
  const alloc = await allocations(stack);
  const exact = new Problems();
  const instancesById = new Map(live.map((r) => [r.uuid, r as InstanceFacts]));
  const migrationsById = new Map(migrations.map((m) => [m.uuid, m]));
  const expected = expectedHoldings(live, migrations, sourceBack);
  // NOTE: not judged: what is still settling (reported by settled/migrations-final): its instance and its open migrations
  const unjudged = new Set(stuckSet);
  for (const m of migrations) {
    if (
      stuckSet.has(m.instanceUuid) ||
      (!isFinal(m.status) && !m.deleted && awaiting(m, instancesById.get(m.instanceUuid), sourceBack) === undefined)
    )
      unjudged.add(m.uuid);
  }
  const everSeen = new Set(rows.map((r) => r.uuid));
  for (const p of consumerProblems(expected, alloc.byConsumer, unjudged, (c) =>
    describeConsumer(c, instancesById, migrationsById, everSeen),
  ))
    exact.add(p);
  if (unjudged.size === 0) {
    const usages = new Map<string, Record<string, number>>();
    for (const rp of alloc.providers) {
      const u = await stack.placement<{ usages: Record<string, number> }>('GET', `/resource_providers/${rp.uuid}/usages`);
      if (u.status === 200) usages.set(rp.name, u.body.usages);
    }
    for (const p of providerProblems(expected, usages)) exact.add(p);
  }

  // migrations-final: every migration created during the scenario is final, or waits for the user (VERIFY_RESIZE) or its source
  const final = new Problems();
  for (const p of migrationProblems(
    migrations.filter((m) => m.createdAt >= o.since),
    instancesById,
    sourceBack,
    Math.round(o.settleMs / 1000),
  ))
    final.add(p);
  results.push(final.result('migrations-final'));

  // capacity: now, per provider and class, and every sample taken during the run
  await monitor.sample(true);
  const found = monitor.take();
  const cap = new Problems();
  for (const rp of alloc.providers) {
    const inv = await stack.placement<{ inventories: Record<string, { total: number; reserved: number; allocation_ratio: number }> }>(
      'GET',
      `/resource_providers/${rp.uuid}/inventories`,
    );
    const u = await stack.placement<{ usages: Record<string, number> }>('GET', `/resource_providers/${rp.uuid}/usages`);
    // NOTE: a provider deleted since it was listed (a compute service deleted at the end of a scenario) holds nothing
    if (inv.status === 404 && u.status === 404) continue;
    if (inv.status !== 200 || u.status !== 200) {
      cap.add(`provider ${rp.name}: inventories ${inv.status}, usages ${u.status}`);
      continue;
    }
    for (const [rc, used] of Object.entries(u.body.usages)) {
      const i = inv.body.inventories[rc];
      if (i === undefined) {
        if (used > 0) cap.add(`${rp.name} ${rc}: used ${used} with no inventory`);
        continue;
      }
      const capacity = (i.total - i.reserved) * i.allocation_ratio;
      if (used > capacity)
        cap.add(`${rp.name} ${rc}: used ${used} > (total ${i.total} - reserved ${i.reserved}) × ${i.allocation_ratio} = ${capacity}`);
    }
  }
  for (const v of dedupe(found.capacity)) cap.add(`during the run: ${v}`);
  if (found.samples.capacity === 0) cap.add('no capacity sample could be taken during the run');
  results.push(cap.result('capacity'));

  // single-host: one live row across cells; one successful build per instance action; the computes' own guests
  const single = new Problems();
  for (const [uuid, rs] of byUuid)
    if (rs.length > 1) single.add(`${uuid}: live instance rows in ${rs.map((r) => `${r.cell}@${r.host ?? '-'}`).join(' and ')}`);
  const topo = stack.topology();
  for (const c of topo.cells) {
    const dup = await stack.query<{ instance_uuid: string; hosts: string }>(
      stack.adminUrl(`${stack.prefix}_${c.name}`),
      `
      SELECT a.instance_uuid::text, string_agg(DISTINCT e.host, ',') AS hosts FROM instance_actions a JOIN instance_actions_events e ON e.action_id = a.id
      WHERE a.action = 'create' AND e.event = 'compute__do_build_and_run_instance' AND e.result = 'Success'
      GROUP BY a.instance_uuid HAVING count(DISTINCT e.host) > 1`,
    );
    for (const d of dup) single.add(`${d.instance_uuid}: build succeeded on ${d.hosts} (${c.name} instance actions)`);
  }
  for (let attempt = 0; ; attempt++) {
    const guests: { host: string; uuid: string }[] = [];
    for (const c of topo.cells) {
      if (!stack.isRunning(`compute-${c.name}`)) continue;
      const r = await fetch(`http://127.0.0.1:${stack.controlPort(c.name)}/guests`, { signal: AbortSignal.timeout(10_000) });
      for (const [host, uuids] of Object.entries((await r.json()) as Record<string, string[]>))
        for (const uuid of uuids) guests.push({ host, uuid });
    }
    const found = guestProblems(guests, instancesById, migrations, sourceBack, stuckSet);
    // a terminate (or a confirm's, a live migration's, an evacuation's source cleanup) may still be in flight at quiescence: look again (≤ 10 s)
    if (found.length === 0 || attempt >= 10) {
      for (const p of found) single.add(p);
      break;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  results.push(single.result('single-host'));

  // isolation: sampled connections, plus what the cell processes are given and allowed
  const iso = new Problems();
  for (const v of dedupe(found.isolation)) iso.add(v);
  if (found.samples.pg === 0 || found.samples.amqp === 0)
    iso.add(`connections not sampled (pg ${found.samples.pg}, broker ${found.samples.amqp}; last error: ${monitor.lastError ?? '-'})`);
  for (const p of await isolationByConstruction(stack)) iso.add(p);
  results.push(iso.result('isolation'));

  // error-faults: every ERROR instance has a fault that says why (API view and instance_faults)
  const faults = new Problems();
  const faultRows = new Set<string>();
  for (const c of [{ name: 'cell0' }, ...topo.cells]) {
    const fr = await stack.query<{ instance_uuid: string }>(
      stack.adminUrl(`${stack.prefix}_${c.name}`),
      "SELECT DISTINCT instance_uuid::text FROM instance_faults WHERE message <> ''",
    );
    for (const f of fr) faultRows.add(f.instance_uuid);
  }
  for (const r of live.filter((x) => x.vm_state === 'error')) {
    const s = apiById.get(r.uuid);
    if (!faultRows.has(r.uuid)) faults.add(`${r.uuid}: ERROR in ${r.cell} with no instance fault`);
    else if (s !== undefined && !(s.fault?.message ?? '').trim()) faults.add(`${r.uuid}: ERROR; the API shows no fault message`);
  }
  results.push(faults.result('error-faults'));

  // audit: every cell conductor's own audit ran without failing and once more after quiescence (what it healed is a
  // leak that existed); the operator's `cellsched-manage placement audit` at quiescence finds nothing orphaned
  const audits = await auditProblems(stack, o.logsFrom, quiescedAt);
  for (const p of auditFindings(audits.passes)) exact.add(p);
  results.push(exact.result('allocations-exact'));
  const audit = new Problems();
  for (const p of audits.problems) audit.add(p);
  results.push(audit.result('audit'));

  // server-groups: no anti-affinity group with more ACTIVE members on a host than it allows, no affinity group split (group-invariant.ts)
  const groups = new Problems();
  for (const p of await serverGroupProblems(stack, servers as HostedServer[])) groups.add(p);
  results.push(groups.result('server-groups'));

  return { results, stats };
}

function dedupe(vs: { what: string }[]): string[] {
  const counts = new Map<string, number>();
  for (const v of vs) counts.set(v.what, (counts.get(v.what) ?? 0) + 1);
  return [...counts].map(([w, n]) => (n > 1 ? `${w} (${n} samples)` : w));
}

/** The cell processes cannot reach the API level: no API credentials in their environment, their roles cannot connect to the API DB, their users have no permission on the API vhost. */
async function isolationByConstruction(stack: ChaosStack): Promise<string[]> {
  const problems: string[] = [];
  const topo = stack.topology();
  const apiRole = `${stack.prefix}_api`;
  const secrets = [topo.apiDbUrl, topo.apiTransportUrl, `${apiRole}-dev`];
  for (const s of stack.services().filter((n) => /^(cell-conductor|compute)-/.test(n))) {
    const pid = stack.pid(s);
    if (pid === undefined) continue;
    let env = '';
    try {
      env = readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      problems.push(`${s}: cannot read its environment`);
      continue;
    }
    if (secrets.some((x) => env.includes(x))) problems.push(`${s} (pid ${pid}) was given API-level credentials in its environment`);
  }
  for (const c of topo.cells) {
    const role = `${stack.prefix}_${c.name}`;
    const [r] = await stack.query<{ ok: boolean }>(stack.adminUrl(), 'SELECT has_database_privilege($1, $2, $3) AS ok', [
      role,
      apiRole,
      'CONNECT',
    ]);
    if (r?.ok) problems.push(`role ${role} may CONNECT to the API database`);
    try {
      const perms = execFileSync('rabbitmqctl', ['-q', 'list_user_permissions', role], { encoding: 'utf8', timeout: 20_000 });
      const vhosts = perms
        .split('\n')
        .map((l) => l.split('\t')[0]?.trim())
        .filter((v) => v && v !== 'vhost');
      if (vhosts.some((v) => v !== role))
        problems.push(`broker user ${role} has permissions on ${vhosts.join(', ')} (only ${role} expected)`);
    } catch (e) {
      problems.push(`rabbitmqctl list_user_permissions ${role}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  return problems;
}
