// Look-ups and operator steps the move scenarios share: servers at rest, their migrations,
// placement's allocations of a set of servers checked exactly right now (the invariant's rule,
// move-model.ts), compute services (enable/disable, force down, discover, delete).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Tally, type ServerView } from './checks';
import { instanceRows, migrationRows, sourceBackOf } from './invariants';
import { consumerProblems, describeConsumer, expectedHoldings, unsettled, type MigrationFacts } from './move-model';
import type { ChaosContext } from './scenario';
import { ROOT } from './stack';

const run = promisify(execFile);

/** A server as the move scenarios look at it (admin view, 2.62). */
export interface MovedServer extends ServerView {
  'OS-EXT-STS:task_state'?: string | null;
  'OS-EXT-STS:vm_state'?: string;
  flavor?: { original_name?: string; vcpus?: number; ram?: number };
}

/** The API's view of these servers, by id (absent: not listed, i.e. deleted). */
export async function movedServers(ctx: ChaosContext, ids: readonly string[]): Promise<Map<string, MovedServer>> {
  const want = new Set(ids);
  const out = new Map<string, MovedServer>();
  let marker: string | undefined;
  for (;;) {
    const r = await ctx.stack.api<{ servers: MovedServer[] }>(
      'GET',
      `/servers/detail?all_tenants=1&limit=1000${marker ? `&marker=${marker}` : ''}`,
    );
    if (r.status !== 200) throw new Error(`GET /servers/detail: ${r.status}`);
    for (const s of r.body.servers) if (want.has(s.id)) out.set(s.id, s);
    if (r.body.servers.length < 1000) return out;
    marker = r.body.servers[r.body.servers.length - 1]?.id;
  }
}

/**
 * Waits until every one of `ids` is at rest (no BUILD, no task_state) or gone, in two polls in a
 * row; returns their views (gone ones absent).
 */
export async function settledServers(ctx: ChaosContext, ids: readonly string[], timeoutMs = 120_000): Promise<Map<string, MovedServer>> {
  let last = new Map<string, MovedServer>();
  let restful = 0;
  try {
    return await ctx.waitFor(
      `${ids.length} servers at rest`,
      async () => {
        last = await movedServers(ctx, ids);
        // NOTE: twice: a view read while the super-conductor takes an action on can show the server at rest just after the 202
        restful = [...last.values()].every((s) => unsettled(s) === undefined) ? restful + 1 : 0;
        return restful >= 2 ? last : undefined;
      },
      timeoutMs,
    );
  } catch (e) {
    const busy = [...last.values()].filter((s) => unsettled(s) !== undefined).map((s) => `${s.id} ${unsettled(s) ?? ''}`);
    throw new Error(`${(e as Error).message}: ${busy.slice(0, 5).join(', ')}`);
  }
}

/** Boots `n` servers (in bursts of `burst`) and waits (90 s at most) until they are at rest: their ids, views, and those ACTIVE. */
export async function bootSettled(
  ctx: ChaosContext,
  n: number,
  burst: number,
): Promise<{ booted: string[]; views: Map<string, MovedServer>; active: string[] }> {
  const booted = await ctx.boot(n, { burst });
  const views = await settledServers(ctx, booted, 90_000);
  return { booted, views, active: booted.filter((id) => views.get(id)?.status === 'ACTIVE') };
}

/** Every answer's status is one of `statuses` (202: accepted); the count of each status goes in the message. */
export function expectAnswers(
  ctx: ChaosContext,
  answers: readonly { status: number }[],
  what: string,
  statuses: readonly number[] = [202],
): void {
  ctx.expect(
    answers.every((a) => statuses.includes(a.status)),
    `${what} (${JSON.stringify(countBy(answers, (a) => String(a.status)))})`,
  );
}

/** How one moved server ended: its view (absent: deleted) and its newest migration. */
export type MoveOutcome = (id: string, s: MovedServer | undefined, m: MigrationFacts | undefined) => boolean;

/**
 * Waits (`timeoutMs` at most) until the moved servers `ids` are at rest, then checks each with its
 * newest migration: `ok` whether it ended as it may, `problem` what to say when not; one Tally
 * line titled `what`. Returns the views and the newest migrations.
 */
export async function expectMoveOutcomes(
  ctx: ChaosContext,
  ids: readonly string[],
  timeoutMs: number,
  what: string,
  ok: MoveOutcome,
  problem: (id: string, s: MovedServer | undefined, m: MigrationFacts | undefined) => string,
): Promise<{ servers: Map<string, MovedServer>; last: Map<string, MigrationFacts> }> {
  const servers = await settledServers(ctx, ids, timeoutMs);
  const last = lastMigrationOf(await migrationsOf(ctx, ids));
  const t = new Tally(what);
  for (const id of ids) {
    const s = servers.get(id);
    const m = last.get(id);
    t.check(ok(id, s, m), () => problem(id, s, m));
  }
  t.report(ctx);
  return { servers, last };
}

export const hostOf = (s: MovedServer | undefined): string => s?.['OS-EXT-SRV-ATTR:host'] ?? '';
export const flavorName = (s: MovedServer | undefined): string => s?.flavor?.original_name ?? '';

/** The migration records of these instances (every cell), oldest first. */
export async function migrationsOf(ctx: ChaosContext, ids: readonly string[]): Promise<MigrationFacts[]> {
  const want = new Set(ids);
  return (await migrationRows(ctx.stack)).filter((m) => want.has(m.instanceUuid)).sort((a, b) => a.createdAt - b.createdAt);
}

/** The newest migration of each instance. */
export function lastMigrationOf(ms: readonly MigrationFacts[]): Map<string, MigrationFacts> {
  const out = new Map<string, MigrationFacts>();
  for (const m of ms) out.set(m.instanceUuid, m);
  return out;
}

/**
 * Placement right now for these servers and their migrations, by the invariant's rule
 * (move-model.ts): each instance on a host holds its flavor there, each migration awaiting
 * confirm or its evacuated source holds the source, nothing else holds anything.
 */
export async function allocationProblemsOf(ctx: ChaosContext, ids: readonly string[]): Promise<string[]> {
  const want = new Set(ids);
  const rows = (await instanceRows(ctx.stack)).filter((r) => want.has(r.uuid));
  const migrations = await migrationsOf(ctx, ids);
  const sourceBack = await sourceBackOf(ctx.stack);
  const live = rows.filter((r) => !r.deleted);
  const expected = expectedHoldings(live, migrations, sourceBack);
  const rps = await ctx.stack.placement<{ resource_providers: { uuid: string; name: string }[] }>('GET', '/resource_providers');
  const nameOf = new Map(rps.body.resource_providers.map((p) => [p.uuid, p.name]));
  const actual = new Map<string, Map<string, Record<string, number>>>();
  for (const consumer of [...ids, ...migrations.map((m) => m.uuid)]) {
    const r = await ctx.stack.placement<{ allocations: Record<string, { resources: Record<string, number> }> }>(
      'GET',
      `/allocations/${consumer}`,
    );
    if (r.status !== 200) throw new Error(`GET /allocations/${consumer}: ${r.status}`);
    const m = new Map(Object.entries(r.body.allocations).map(([rp, a]) => [nameOf.get(rp) ?? rp, a.resources]));
    if (m.size > 0) actual.set(consumer, m);
  }
  const byUuid = new Map(live.map((r) => [r.uuid, r]));
  return consumerProblems(expected, actual, new Set(), (c) =>
    describeConsumer(c, byUuid, new Map(migrations.map((m) => [m.uuid, m])), new Set(rows.map((r) => r.uuid))),
  );
}

/** Records allocationProblemsOf as one scenario check. */
export async function expectExactAllocations(ctx: ChaosContext, ids: readonly string[], when: string): Promise<void> {
  const p = await allocationProblemsOf(ctx, ids);
  ctx.expect(
    p.length === 0,
    `placement holds exactly the instances and their open migrations ${when} (${ids.length} servers)${p.length ? `: ${p.slice(0, 4).join(' | ')}` : ''}`,
  );
}

export interface ComputeService {
  id: string;
  host: string;
  status: string;
  state: string;
  forced_down?: boolean;
}

export async function computeServices(ctx: ChaosContext): Promise<ComputeService[]> {
  const r = await ctx.stack.api<{ services: ComputeService[] }>('GET', '/os-services?binary=nova-compute');
  if (r.status !== 200) throw new Error(`GET /os-services: ${r.status}`);
  return r.body.services;
}

/** 2.53's PUT /os-services/{id} on `host`'s compute service; returns the HTTP status (404: no such service). */
export async function updateComputeService(
  ctx: ChaosContext,
  host: string,
  body: Record<string, unknown>,
): Promise<{ status: number; body: unknown }> {
  const svc = (await computeServices(ctx)).find((s) => s.host === host);
  if (svc === undefined) return { status: 404, body: `no compute service on ${host}` };
  return ctx.stack.api('PUT', `/os-services/${svc.id}`, body);
}

/** `nova-manage cell_v2 discover_hosts`: maps new compute hosts to their cells. */
export async function discoverHosts(ctx: ChaosContext): Promise<void> {
  await run('node', ['services/manage/dist/main.js', 'cell_v2', 'discover_hosts'], {
    cwd: ROOT,
    env: { ...process.env, CELLSCHED_API_DB_URL: ctx.stack.topology().apiDbUrl },
  });
}

/** Waits until `hosts`' compute services are listed up and enabled. */
export async function waitServicesUp(ctx: ChaosContext, hosts: readonly string[], timeoutMs = 30_000): Promise<void> {
  await ctx.waitFor(
    `${hosts.join(',')} up and enabled`,
    async () => {
      const up = (await computeServices(ctx)).filter((s) => hosts.includes(s.host) && s.state === 'up' && s.status === 'enabled');
      return up.length === hosts.length ? true : undefined;
    },
    timeoutMs,
  );
}

/** Deletes every server the API shows on `hosts` (through the ledger) and waits until they are gone; returns how many. */
export async function deleteServersOn(ctx: ChaosContext, hosts: readonly string[], timeoutMs = 60_000): Promise<number> {
  const on: string[] = [];
  let marker: string | undefined;
  for (;;) {
    const r = await ctx.stack.api<{ servers: MovedServer[] }>(
      'GET',
      `/servers/detail?all_tenants=1&limit=1000${marker ? `&marker=${marker}` : ''}`,
    );
    if (r.status !== 200) throw new Error(`GET /servers/detail: ${r.status}`);
    on.push(...r.body.servers.filter((s) => hosts.includes(hostOf(s))).map((s) => s.id));
    if (r.body.servers.length < 1000) break;
    marker = r.body.servers[r.body.servers.length - 1]?.id;
  }
  for (const id of on) await ctx.deleteServer(id);
  await ctx.waitFor(
    `${on.length} servers on ${hosts.join(',')} gone`,
    async () => ((await movedServers(ctx, on)).size === 0 ? true : undefined),
    timeoutMs,
  );
  return on.length;
}

/**
 * Removes `hosts` from the cloud for the next scenarios: their compute services deleted (Nova's
 * 409 while a host still holds instances or migrations: retried), then waits until placement
 * has dropped their providers.
 */
export async function forgetHosts(ctx: ChaosContext, hosts: readonly string[]): Promise<void> {
  for (const host of hosts) {
    let last = '';
    await ctx
      .waitFor(
        `compute service ${host} deleted`,
        async () => {
          const svc = (await computeServices(ctx)).find((s) => s.host === host);
          if (svc === undefined) return true;
          const r = await ctx.stack.api('DELETE', `/os-services/${svc.id}`);
          if (r.status === 204 || r.status === 404) return true;
          last = `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
          return undefined;
        },
        60_000,
      )
      .catch((e: unknown) => {
        throw new Error(`${(e as Error).message}; its last answer: ${last}`);
      });
  }
  await ctx.waitFor(
    `${hosts.join(',')}'s providers deleted`,
    async () => {
      const rps = await ctx.stack.placement<{ resource_providers: { name: string }[] }>('GET', '/resource_providers');
      return rps.body.resource_providers.some((p) => hosts.includes(p.name)) ? undefined : true;
    },
    60_000,
  );
}

/** Counts of `what(x)` over `xs`, for notes (`{ VERIFY_RESIZE: 3, ACTIVE: 1 }`). */
export function countBy<T>(xs: Iterable<T>, what: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) {
    const k = what(x);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
