// What the compose e2e reads from outside the deployment: servers through the published API,
// the chaos checker's placement model (e2e/chaos/move-model.ts) over the cell databases (through
// the published PostgreSQL, as its superuser) and placement's REST API, and the collector's output.
import { Client } from 'pg';
import { instanceRows } from '../chaos/invariants';
import { consumerProblems, describeConsumer, expectedHoldings, providerProblems } from '../chaos/move-model';
import type { Topology } from '../chaos/scenario';
import { type ComposeDeployment, waitFor } from './deployment';

export const IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6';

export interface Server {
  id: string;
  status: string;
  'OS-EXT-STS:task_state'?: string | null;
  'OS-EXT-SRV-ATTR:host'?: string | null;
  fault?: { message?: string; code?: number };
}
interface ActionEvent {
  event: string;
  host?: string | null;
  result?: string | null;
}

export async function createServer(d: ComposeDeployment, name: string): Promise<string> {
  const r = await d.api<{ server: { id: string } }>('POST', '/servers', {
    server: { name, flavorRef: '1', imageRef: IMAGE, networks: 'none' },
  });
  if (r.status !== 202) throw new Error(`POST /servers: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.server.id;
}

/** Waits until every server is ACTIVE or ERROR with no task; returns them by id. */
export async function settled(d: ComposeDeployment, ids: readonly string[], timeoutMs = 180_000): Promise<Map<string, Server>> {
  return waitFor(
    `servers ${ids.join(', ')} to settle`,
    async () => {
      const out = new Map<string, Server>();
      for (const id of ids) {
        const r = await d.api<{ server: Server }>('GET', `/servers/${id}`);
        const s = r.body.server;
        if (r.status !== 200 || !['ACTIVE', 'ERROR'].includes(s.status) || s['OS-EXT-STS:task_state']) return undefined;
        out.set(id, s);
      }
      return out;
    },
    timeoutMs,
  );
}

/** The hosts of the create's build attempts, in order (Nova's instance action events, through the API). */
export async function buildHosts(d: ComposeDeployment, id: string): Promise<string[]> {
  const list = await d.api<{ instanceActions: { action: string; request_id: string }[] }>('GET', `/servers/${id}/os-instance-actions`);
  const create = list.body.instanceActions.find((a) => a.action === 'create');
  if (create === undefined) throw new Error(`${id}: no create action`);
  const one = await d.api<{ instanceAction: { events: ActionEvent[] } }>('GET', `/servers/${id}/os-instance-actions/${create.request_id}`);
  return one.body.instanceAction.events
    .filter((e) => e.event === 'compute__do_build_and_run_instance' && e.host)
    .map((e) => e.host as string);
}

const cellOfHost = (host: string): string => host.replace(/-compute-\d+$/, '');

/** Servers grouped by the cell of their host (`cell1-compute-3` is in cell1). */
export function byCell(servers: Iterable<Server>): Map<string, Server[]> {
  const out = new Map<string, Server[]>();
  for (const s of servers) {
    const host = s['OS-EXT-SRV-ATTR:host'];
    if (host) out.set(cellOfHost(host), [...(out.get(cellOfHost(host)) ?? []), s]);
  }
  return out;
}

/** Whether every build attempt of a create stayed in one cell. */
export const oneCell = (hosts: readonly string[]): boolean => new Set(hosts.map(cellOfHost)).size === 1;

/** The superuser URL of one database of the deployment, through its published PostgreSQL port. */
export function adminUrl(d: ComposeDeployment, db = 'postgres'): string {
  const u = new URL(d.endpoints.composeAdminUrl);
  u.pathname = `/${db}`;
  return u.toString();
}

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

async function placementHoldings(d: ComposeDeployment) {
  const { resource_providers: rps } = await d.placement<{ resource_providers: { uuid: string; name: string }[] }>('/resource_providers');
  const byConsumer = new Map<string, Map<string, Record<string, number>>>();
  const usages = new Map<string, Record<string, number>>();
  for (const rp of rps) {
    const { allocations } = await d.placement<{ allocations: Record<string, { resources: Record<string, number> }> }>(
      `/resource_providers/${rp.uuid}/allocations`,
    );
    for (const [consumer, a] of Object.entries(allocations))
      byConsumer.set(consumer, (byConsumer.get(consumer) ?? new Map()).set(rp.name, a.resources));
    usages.set(rp.name, (await d.placement<{ usages: Record<string, number> }>(`/resource_providers/${rp.uuid}/usages`)).usages);
  }
  return { byConsumer, usages };
}

/**
 * The chaos checker's allocations-exact invariant: placement's consumers are exactly the
 * instances on a host (their flavor on their node), and each provider's usages their sum.
 * Returns the problems (none: exact).
 */
export async function placementProblems(d: ComposeDeployment, cells: readonly string[]): Promise<string[]> {
  const topology = { cells: cells.map((name) => ({ name })) } as unknown as Topology;
  const rows = await instanceRows({
    prefix: 'cellsched',
    topology: () => topology,
    adminUrl: (db?: string) => adminUrl(d, db),
    query: (url, sql, params) => query(url, sql, params),
  });
  const live = rows.filter((r) => !r.deleted);
  const expected = expectedHoldings(live, [], () => true);
  const { byConsumer, usages } = await placementHoldings(d);
  const instances = new Map(live.map((r) => [r.uuid, r]));
  const seen = new Set(rows.map((r) => r.uuid));
  return [
    ...consumerProblems(expected, byConsumer, new Set(), (c) => describeConsumer(c, instances, new Map(), seen)),
    ...providerProblems(expected, usages),
  ];
}

/** The chaos checker's capacity invariant, now: no provider's usage above (total - reserved) x allocation_ratio. */
export async function capacityProblems(d: ComposeDeployment): Promise<string[]> {
  const { resource_providers: rps } = await d.placement<{ resource_providers: { uuid: string; name: string }[] }>('/resource_providers');
  const out: string[] = [];
  for (const rp of rps) {
    const { inventories } = await d.placement<{
      inventories: Record<string, { total: number; reserved: number; allocation_ratio: number }>;
    }>(`/resource_providers/${rp.uuid}/inventories`);
    const { usages } = await d.placement<{ usages: Record<string, number> }>(`/resource_providers/${rp.uuid}/usages`);
    for (const [rc, used] of Object.entries(usages)) {
      const i = inventories[rc];
      const capacity = i === undefined ? 0 : (i.total - i.reserved) * i.allocation_ratio;
      if (used > capacity) out.push(`${rp.name} ${rc}: used ${used} > capacity ${capacity}`);
    }
  }
  return out;
}

/** The chaos checker's single-host invariant from the cells' records: no create succeeded on two hosts (a redelivered build built twice). */
export async function doubleBuilds(d: ComposeDeployment, cells: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const cell of cells) {
    const rows = await query<{ instance_uuid: string; hosts: string }>(
      adminUrl(d, `cellsched_${cell}`),
      `
      SELECT a.instance_uuid::text, string_agg(DISTINCT e.host, ',') AS hosts FROM instance_actions a JOIN instance_actions_events e ON e.action_id = a.id
      WHERE a.action = 'create' AND e.event = 'compute__do_build_and_run_instance' AND e.result = 'Success'
      GROUP BY a.instance_uuid HAVING count(DISTINCT e.host) > 1`,
    );
    for (const r of rows) out.push(`${r.instance_uuid}: build succeeded on ${r.hosts} (${cell})`);
  }
  return out;
}

/** Every block the collector (trace-tail) printed for `traceId`, joined: a trace may be printed in parts as its spans arrive. */
export function traceBlocks(collectorOutput: string, traceId: string): string {
  return collectorOutput
    .split(/\n(?=trace )/)
    .filter((b) => b.startsWith(`trace ${traceId} `))
    .join('\n');
}

/** The `service@host` pairs of a printed trace. */
export function servicesIn(block: string): Set<string> {
  return new Set([...block.matchAll(/ ([a-z-]+)@([a-z0-9-]+) /g)].map((m) => `${m[1] ?? ''}@${m[2] ?? ''}`));
}
