// The server-group invariant, from the compute API only: every group (`GET /os-server-groups`,
// all projects, microversion 2.64 for `policy` and `rules`) against where its ACTIVE members run
// (`OS-EXT-SRV-ATTR:host` in the servers list). Anti-affinity: at most `max_server_per_host`
// (default 1) ACTIVE members per host; affinity: all ACTIVE members on one host. soft-* policies
// are preferences, not checked. Members in ERROR or gone hold no host and are not counted.
import type { ChaosStack } from './stack';

/** A server group as `GET /os-server-groups` shows it at 2.64. */
export interface ApiGroup {
  id: string;
  name: string;
  policy: string;
  rules: { max_server_per_host?: number };
  members: string[];
}

/** A server as the list shows it (admin view). */
export interface HostedServer {
  id: string;
  status: string;
  'OS-EXT-SRV-ATTR:host'?: string | null;
}

async function serverGroups(stack: ChaosStack): Promise<ApiGroup[]> {
  const r = await fetch(`${stack.apiUrl}/os-server-groups?all_projects=True`, {
    headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'compute 2.64', accept: 'application/json' },
  });
  if (r.status !== 200) throw new Error(`GET /os-server-groups: ${r.status} ${(await r.text()).slice(0, 300)}`);
  return ((await r.json()) as { server_groups: ApiGroup[] }).server_groups;
}

/** Host → ACTIVE members of the group there. */
function activeByHost(g: ApiGroup, servers: ReadonlyMap<string, HostedServer>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of g.members) {
    const s = servers.get(m);
    const host = s?.['OS-EXT-SRV-ATTR:host'];
    if (s?.status !== 'ACTIVE' || host === undefined || host === null) continue;
    out.set(host, [...(out.get(host) ?? []), m]);
  }
  return out;
}

/** Every violation of an anti-affinity or affinity group, one line each (the API's groups and servers). */
export async function serverGroupProblems(stack: ChaosStack, servers: readonly HostedServer[]): Promise<string[]> {
  return groupViolations(await serverGroups(stack), servers);
}

/** Every violation of the groups given where their ACTIVE members run. Pure. */
export function groupViolations(groups: readonly ApiGroup[], servers: readonly HostedServer[]): string[] {
  const byId = new Map(servers.map((s) => [s.id, s]));
  const problems: string[] = [];
  for (const g of groups) {
    const byHost = activeByHost(g, byId);
    if (g.policy === 'anti-affinity') {
      const most = g.rules.max_server_per_host ?? 1;
      for (const [host, ids] of byHost) {
        if (ids.length > most)
          problems.push(
            `anti-affinity group ${g.name} (${g.id}): ${ids.length} ACTIVE members on ${host} (at most ${most}): ${ids.join(', ')}`,
          );
      }
    } else if (g.policy === 'affinity' && byHost.size > 1) {
      problems.push(
        `affinity group ${g.name} (${g.id}): ACTIVE members on ${byHost.size} hosts: ${[...byHost].map(([h, ids]) => `${h}: ${ids.join(', ')}`).join('; ')}`,
      );
    }
  }
  return problems;
}
