import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { serverViews } from '../checks';
import type { ChaosContext, Scenario } from '../scenario';
import { ROOT } from '../stack';
import { expectAllRunning, killAndRestart, startFailingLoad, stopLoad } from './03-outage-checks';
import { ExtraCompute } from '../extra-compute';

const run = promisify(execFile);

/**
 * SIGKILL of a simulated-compute process (all the hosts of one cell) in the middle of builds
 * (with reschedules), then a restart: the builds it held unacked are redelivered to it and
 * settle; nothing is lost, no guest runs twice (the invariants).
 */
export const computeKillRestart: Scenario = {
  name: 'compute-kill-restart',
  summary: 'SIGKILL a compute process mid-builds (30% reschedules), restart it: every build settles, one host each',
  ci: true,
  async run(ctx) {
    const computes = ctx.stack.servicesOf('compute');
    await startFailingLoad(ctx, 0.3, 4);
    const rounds = ctx.profile.name === 'ci' ? 1 : 3;
    for (let r = 0; r < rounds; r++) {
      const victim = ctx.rng.pick(computes);
      // a burst just before the kill: builds certainly in flight on the victim
      const burst = await ctx.boot(ctx.scale(40), { burst: 20 });
      await ctx.wait(ctx.rng.int(0, ctx.stack.shape.buildLatencyMs));
      await killAndRestart(ctx, victim, r + 1, `${burst.length} builds just accepted`);
      await ctx.wait(2000);
    }
    await stopLoad(ctx);
  },
};

const DOOMED_ENV = {
  // the build deadline both conductors use, the heartbeat age that makes a compute down, the watchdog period
  CELLSCHED_BUILD_TIMEOUT_MS: '15000',
  CELLSCHED_SERVICE_DOWN_TIME_MS: '25000',
  CELLSCHED_WATCHDOG_INTERVAL_MS: '2000',
};

/** Restarts `names` with `env` added to what the stack gives them (the launcher passes its own environment on). */
async function restartWith(ctx: ChaosContext, names: readonly string[], env: Record<string, string>): Promise<void> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    for (const n of names) await ctx.stack.restart(n, 'SIGTERM');
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

interface OsService {
  id: string;
  host: string;
  binary: string;
  status: string;
  state: string;
}

async function setServiceStatus(ctx: ChaosContext, host: string, status: 'enabled' | 'disabled'): Promise<boolean> {
  const list = await ctx.stack.api<{ services: OsService[] }>('GET', `/os-services?host=${host}&binary=nova-compute`);
  const svc = list.body.services?.find((s) => s.host === host);
  if (svc === undefined) return false;
  if (svc.status === status) return true;
  const r = await ctx.stack.api(
    'PUT',
    `/os-services/${svc.id}`,
    status === 'disabled' ? { status, disabled_reason: 'chaos: compute killed for good' } : { status },
  );
  return r.status === 200;
}

/** Deletes the host's resource provider (it must hold no allocation any more) and its host mapping. */
async function forgetHost(ctx: ChaosContext, apiDbUrl: string, cell: { uuid: string }, host: string): Promise<void> {
  const rps = await ctx.stack.placement<{ resource_providers: { uuid: string }[] }>('GET', `/resource_providers?name=${host}`);
  for (const rp of rps.body.resource_providers ?? []) {
    const r = await ctx.stack.placement('DELETE', `/resource_providers/${rp.uuid}`);
    ctx.expect(r.status === 204, `${host}'s provider deleted, no allocation left on it (${r.status})`);
  }
  await run('node', ['services/manage/dist/main.js', 'cell_v2', 'delete_host', '--cell_uuid', cell.uuid, '--host', host], {
    cwd: ROOT,
    env: { ...process.env, CELLSCHED_API_DB_URL: apiDbUrl },
  });
}

/**
 * A compute killed for good (Nova leaves its builds in BUILD; here the cell conductor's
 * watchdog moves them on): one extra compute host joins cell 1, builds hang on it (in flight,
 * unacked), it is SIGKILLed and stays down. Once the build deadline passed and its heartbeat is
 * stale, each of its builds goes to an alternate and ends ACTIVE there. Then it comes back:
 * its queued stale builds run, their successes are refused and the guests terminated (one host
 * each). The conductors run with a 15 s build deadline and a 25 s service_down_time for this.
 */
export const computeKilledForGood: Scenario = {
  name: 'compute-killed-for-good',
  summary: 'a compute dies for good with builds in flight: the watchdog moves them to alternates (ACTIVE), none left in BUILD',
  ci: false,
  // exact outcome expected (every moved build ACTIVE on an alternate): a --fail-rate baseline
  // would make some alternates fail too and end builds in ERROR (max retries), legitimately
  baselineFaults: false,
  timeoutMs: 300_000,
  async run(ctx) {
    const topo = ctx.stack.topology();
    const cell = topo.cells[0];
    if (cell === undefined) throw new Error('no cell');
    const conductors = ['super-conductor', `cell-conductor-${cell.name}`];
    const doomed = new ExtraCompute(ctx, cell, `${cell.name}-doomed-1`);
    try {
      await restartWith(ctx, conductors, DOOMED_ENV);
      await doomed.start();
      await run('node', ['services/manage/dist/main.js', 'cell_v2', 'discover_hosts'], {
        cwd: ROOT,
        env: { ...process.env, CELLSCHED_API_DB_URL: topo.apiDbUrl },
      });
      ctx.expect(await setServiceStatus(ctx, doomed.host, 'enabled'), `${doomed.host} registered and enabled`);
      await doomed.faults({ hang: true });
      ctx.log(`${doomed.host} joined ${cell.name}; its builds hang (in flight, unacked)`);

      // boot until a few builds are hung on the doomed host (the scheduler spreads; it is the emptiest host)
      const want = ctx.profile.name === 'ci' ? 2 : 4;
      const all: string[] = [];
      const hung = await ctx.waitFor(
        `${want} builds in flight on ${doomed.host}`,
        async () => {
          all.push(...(await ctx.boot(6, { burst: 6 })));
          const views = await serverViews(ctx, all);
          const on = [...views.values()].filter((s) => s.status === 'BUILD' && s['OS-EXT-SRV-ATTR:host'] === doomed.host).map((s) => s.id);
          return on.length >= want || all.length >= 120 ? on : undefined;
        },
        120_000,
      );
      ctx.expect(hung.length > 0, `builds in flight on ${doomed.host} when it dies (${hung.length}, of ${all.length} booted)`);
      ctx.note('inFlightOnDoomed', hung.length);
      await doomed.stop('SIGKILL');
      const killedAt = Date.now();
      ctx.log(`${doomed.host} SIGKILLed for good with ${hung.length} builds in flight: ${hung.join(' ')}`);

      // the watchdog: deadline (15 s) passed and heartbeat stale (25 s) → retried on an alternate
      const moved = await ctx.waitFor(
        'every in-flight build of the dead compute settled elsewhere',
        async () => {
          const views = await serverViews(ctx, hung);
          return hung.every((id) => ['ACTIVE', 'ERROR'].includes(views.get(id)?.status ?? '')) ? views : undefined;
        },
        150_000,
      );
      ctx.note('secondsToRecover', Math.round((Date.now() - killedAt) / 1000));
      for (const id of hung) {
        const s = moved.get(id);
        ctx.expect(
          s?.status === 'ACTIVE' && s['OS-EXT-SRV-ATTR:host'] !== doomed.host && s['OS-EXT-SRV-ATTR:host'] !== undefined,
          `${id} went to an alternate and is ACTIVE there (${s?.status} on ${s?.['OS-EXT-SRV-ATTR:host']}${s?.fault?.message ? `, "${s.fault.message}"` : ''})`,
        );
      }
      ctx.log(`all ${hung.length} moved to alternates ${Math.round((Date.now() - killedAt) / 1000)} s after the kill`);

      // the dead compute comes back: its queued stale builds run, their successes are refused, the guests go
      await doomed.start();
      const stale = await ctx
        .waitFor(
          `${doomed.host}'s stale guests terminated`,
          async () => {
            const g = await doomed.guests();
            return hung.some((id) => g.includes(id)) ? undefined : g;
          },
          60_000,
        )
        .catch(async () => doomed.guests());
      ctx.expect(
        !hung.some((id) => stale.includes(id)),
        `no moved build also runs on the returned ${doomed.host} (guests: ${stale.join(' ') || 'none'})`,
      );
      const after = await serverViews(ctx, hung);
      ctx.expect(
        hung.every((id) => after.get(id)?.status === 'ACTIVE' && after.get(id)?.['OS-EXT-SRV-ATTR:host'] !== doomed.host),
        'the returned compute took none of them back',
      );
    } finally {
      // keep it out of later scenarios (Nova's service delete): disabled, stopped, its provider and host mapping gone
      await setServiceStatus(ctx, doomed.host, 'disabled').catch((e: unknown) =>
        ctx.log(`disabling ${doomed.host}: ${(e as Error).message}`),
      );
      await doomed.stop('SIGTERM');
      await forgetHost(ctx, topo.apiDbUrl, cell, doomed.host).catch((e: unknown) =>
        ctx.log(`removing ${doomed.host}: ${(e as Error).message}`),
      );
      await restartWith(ctx, conductors, {});
    }
    expectAllRunning(ctx, 'after the conductors were restarted with their own settings');
  },
};
