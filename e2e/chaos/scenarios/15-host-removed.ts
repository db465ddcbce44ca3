import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { serverViews, type ServerView } from '../checks';
import { ExtraCompute } from '../extra-compute';
import type { ChaosContext, Scenario } from '../scenario';
import { ROOT } from '../stack';

const run = promisify(execFile);

interface OsService {
  id: string;
  host: string;
  status: string;
  state: string;
}

async function computeServices(ctx: ChaosContext): Promise<OsService[]> {
  const r = await ctx.stack.api<{ services: OsService[] }>('GET', '/os-services?binary=nova-compute');
  if (r.status !== 200) throw new Error(`GET /os-services: ${r.status}`);
  return r.body.services;
}

/**
 * `openstack compute service delete` of `host` (2.53: by uuid). While it still hosts instances
 * (409, as Nova) the servers there are deleted and the delete is tried again: builds already
 * holding it as an alternate may still land there after it was disabled.
 */
async function deleteService(ctx: ChaosContext, host: string): Promise<void> {
  let last = '';
  await ctx
    .waitFor(
      `compute service ${host} deleted`,
      async () => {
        const svc = (await computeServices(ctx)).find((s) => s.host === host);
        if (svc === undefined) return true;
        const r = await ctx.stack.api('DELETE', `/os-services/${svc.id}`);
        if (r.status === 204 || r.status === 404) return true;
        if (r.status !== 409) throw new Error(`DELETE /os-services/${svc.id} (${host}): ${r.status} ${JSON.stringify(r.body)}`);
        last = JSON.stringify(r.body).slice(0, 200);
        await deleteServersOn(ctx, [host]);
        return undefined;
      },
      60_000,
    )
    .catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; its last answer: ${last}`);
    });
}

/** Deletes every server the API shows on `hosts` (the ledger records the deletes); returns how many. */
async function deleteServersOn(ctx: ChaosContext, hosts: readonly string[]): Promise<number> {
  const on: string[] = [];
  let marker: string | undefined;
  for (;;) {
    const r = await ctx.stack.api<{ servers: ServerView[] }>(
      'GET',
      `/servers/detail?all_tenants=1&limit=1000${marker ? `&marker=${marker}` : ''}`,
    );
    if (r.status !== 200) throw new Error(`GET /servers/detail: ${r.status}`);
    on.push(...r.body.servers.filter((s) => hosts.includes(s['OS-EXT-SRV-ATTR:host'] ?? '')).map((s) => s.id));
    if (r.body.servers.length < 1000) break;
    marker = r.body.servers[r.body.servers.length - 1]?.id;
  }
  for (const id of on) await ctx.deleteServer(id);
  return on.length;
}

/**
 * Hosts that stop existing while builds flow: an extra compute process of 4 hosts joins a
 * cell, takes builds, is SIGKILLed and comes back simulating 2 of them (the other 2 are retired
 * at once: never chosen again, their queued builds moved to alternates, the ACTIVE servers
 * there kept), then one of the 2 left is deleted with `compute service delete` (its servers
 * deleted first: Nova refuses while it hosts instances) and never chosen again. No build is
 * left in BUILD, nothing leaks (the invariants).
 */
export const hostRemoved: Scenario = {
  name: 'host-removed',
  summary:
    'a compute restarted with fewer hosts and a compute service deleted while builds flow: removed hosts never chosen again, no build stuck',
  ci: true,
  timeoutMs: 240_000,
  async run(ctx) {
    const topo = ctx.stack.topology();
    const cell = ctx.rng.pick(topo.cells);
    const extra = new ExtraCompute(ctx, cell, `${cell.name}-extra-1`, 4);
    const all: string[] = [];
    const failRate = ctx.profile.name === 'soak' ? 0.45 : 0.3;
    try {
      await ctx.faults.set('all', { failRate });
      await extra.start();
      await extra.faults({ rescheduleRate: failRate });
      const hosts = extra.hostNames;
      await run('node', ['services/manage/dist/main.js', 'cell_v2', 'discover_hosts'], {
        cwd: ROOT,
        env: { ...process.env, CELLSCHED_API_DB_URL: topo.apiDbUrl },
      });
      await ctx.waitFor(
        'the extra hosts up and enabled',
        async () => {
          const up = (await computeServices(ctx)).filter((s) => hosts.includes(s.host) && s.state === 'up' && s.status === 'enabled');
          return up.length === hosts.length ? true : undefined;
        },
        30_000,
      );
      ctx.log(`${hosts.join(',')} joined ${cell.name} (one process)`);
      ctx.load.start({ rate: ctx.profile.name === 'ci' ? 4 : 8 });
      // the empty extra hosts are the scheduler's first choice: wait until they hold builds
      await ctx.waitFor(
        'builds on the extra hosts',
        async () => {
          all.push(...(await ctx.boot(ctx.scale(24), { burst: 12 })));
          const views = await serverViews(ctx, all);
          return [...views.values()].filter((s) => hosts.includes(s['OS-EXT-SRV-ATTR:host'] ?? '')).length >= 4 ? true : undefined;
        },
        60_000,
      );

      // the process dies with builds in flight and comes back simulating 2 hosts: the other 2 stop existing
      const burst = ctx.boot(ctx.scale(24), { burst: 12 });
      await ctx.wait(ctx.rng.int(0, ctx.stack.shape.buildLatencyMs));
      await extra.stop('SIGKILL');
      await extra.start(2);
      await extra.faults({ rescheduleRate: failRate });
      const retired = hosts.filter((h) => !extra.hostNames.includes(h));
      all.push(...(await burst));
      const retiredAt = Date.now();
      ctx.log(`${extra.host}'s process restarted with ${extra.hostNames.join(',')}: ${retired.join(',')} retired`);
      const listed = await computeServices(ctx);
      ctx.expect(
        retired.every((h) => !listed.some((s) => s.host === h)),
        `the retired hosts are gone from os-services at once (${
          listed
            .filter((s) => retired.includes(s.host))
            .map((s) => s.host)
            .join(',') || 'none left'
        })`,
      );

      // one of the hosts left is deleted by the operator (its servers first: 409 while it hosts any)
      const doomed = extra.hostNames[1] ?? '';
      const svc = (await computeServices(ctx)).find((s) => s.host === doomed);
      await ctx.stack.api('PUT', `/os-services/${svc?.id ?? ''}`, { status: 'disabled', disabled_reason: 'chaos: to be deleted' });
      await ctx.wait(3000); // the schedulers' copies (1 s host records; 2 s candidates) catch up with the disable
      const deletedServers = await deleteServersOn(ctx, [doomed]);
      await deleteService(ctx, doomed);
      const deletedAt = Date.now();
      ctx.log(`${doomed} deleted (compute service delete) after deleting its ${deletedServers} servers`);

      all.push(...(await ctx.boot(ctx.scale(24), { burst: 12 })));
      await ctx.wait(2000);
      all.push(...(await ctx.load.stop()));
      const left = await ctx.quiesce(90_000);
      ctx.expect(left.length === 0, `all settled (${left.length} still building)`);

      // a removed host holds only servers created before it was removed
      const views = await serverViews(ctx, all);
      const lateOnRemoved = [...views.values()].filter((s) => {
        const host = s['OS-EXT-SRV-ATTR:host'] ?? '';
        const created = Date.parse((s as ServerView & { created?: string }).created ?? '');
        return (retired.includes(host) && created > retiredAt) || (host === doomed && created > deletedAt - 1000);
      });
      ctx.expect(
        lateOnRemoved.length === 0,
        `no server created after its host was removed runs there (${
          lateOnRemoved
            .map((s) => `${s.id}@${s['OS-EXT-SRV-ATTR:host'] ?? ''}`)
            .slice(0, 5)
            .join(' ') || 'none'
        })`,
      );
      ctx.note('retiredHosts', retired.length);
    } finally {
      if (ctx.load.running) all.push(...(await ctx.load.stop()));
      // leave the cloud as it was: the extra process gone, its servers deleted, its services deleted
      await extra.stop('SIGTERM');
      // every server of the four extra hosts: the retired ones keep the servers that were ACTIVE there (and their providers, while held)
      const names = ['1', '2', '3', '4'].map((i) => `${cell.name}-extra-${i}`);
      await deleteServersOn(ctx, names).catch((e: unknown) => ctx.log(`deleting the extra hosts' servers: ${(e as Error).message}`));
      for (const h of extra.hostNames) await deleteService(ctx, h).catch((e: unknown) => ctx.log(`deleting ${h}: ${(e as Error).message}`));
      // the retired and deleted hosts' providers go too, once nothing holds them (the cell conductor's sweep)
      let stillThere: string[] = [];
      const left = await ctx
        .waitFor(
          "the extra hosts' providers deleted",
          async () => {
            const rps = await ctx.stack.placement<{ resource_providers: { name: string }[] }>('GET', '/resource_providers');
            const still = rps.body.resource_providers.filter((p) => names.includes(p.name)).map((p) => p.name);
            stillThere = still;
            return still.length === 0 ? still : undefined;
          },
          60_000,
        )
        .catch(() => undefined);
      ctx.expect(
        left !== undefined,
        `every provider of the removed hosts is deleted from placement once nothing holds it (still there: ${stillThere.join(',') || 'none'})`,
      );
    }
  },
};
