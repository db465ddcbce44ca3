import type { Scenario } from '../scenario';
import { admin, expectAllRunning, expectNoSpuriousNoValidHost, startFailingLoad, stopLoad } from './03-outage-checks';

/**
 * Restarts the local PostgreSQL cluster (`pg_ctlcluster <v> <name>`, else the service), fast
 * shutdown; with `downMs` > 0 it stays stopped that long in between (always started again).
 */
async function restartPostgres(downMs: number): Promise<string> {
  let cluster: string[] | undefined;
  try {
    const line = (await admin('pg_lsclusters', ['-h'])).split('\n').find((l) => /\s5432\s/.test(l));
    const [version, name] = (line ?? '').trim().split(/\s+/);
    if (version && name) cluster = [version, name];
  } catch (e) {
    if (!/ENOENT/.test((e as Error).message)) throw e;
  }
  const ctl = (action: string): Promise<string> =>
    cluster
      ? admin('pg_ctlcluster', [...cluster, action, ...(action === 'start' ? [] : ['-m', 'fast'])])
      : admin('service', ['postgresql', action]);
  if (downMs <= 0) {
    await ctl('restart');
    return `${cluster ? `pg_ctlcluster ${cluster.join(' ')}` : 'service postgresql'} restart`;
  }
  try {
    await ctl('stop');
    await new Promise((r) => setTimeout(r, downMs));
  } finally {
    await ctl('start');
  }
  return `${cluster ? `pg_ctlcluster ${cluster.join(' ')}` : 'service postgresql'} stop, ${downMs} ms, start`;
}

/**
 * PostgreSQL restarted under load (fast shutdown: every session is terminated, also those
 * holding a transaction open across an RPC): every service reconnects by itself (none
 * crashes), no accepted write is lost (every 202 ends ACTIVE or ERROR), no build turns into
 * NoValidHost because a database read failed, allocations exact afterwards. Creates refused
 * while the API database is down are counted, not lost.
 */
export const postgresRestart: Scenario = {
  name: 'postgres-restart',
  summary: 'PostgreSQL restarted under load: every service reconnects, no 202 lost, no spurious NoValidHost, allocations exact',
  ci: false,
  timeoutMs: 180_000,
  async run(ctx) {
    await startFailingLoad(ctx, 0.3, 4, 3000);
    const before = ctx.boot(ctx.scale(40), { burst: 20 });
    const t0 = Date.now();
    // ci: a plain restart; full: stopped for up to 8 s (sessions holding row locks across RPCs die, casts are redelivered meanwhile)
    const how = await restartPostgres(ctx.profile.name === 'ci' ? 0 : ctx.rng.int(1000, 8000));
    const ids = await before;
    ctx.note('postgresRestartMs', Date.now() - t0);
    ctx.log(`${how}: ${Date.now() - t0} ms`);
    await ctx.wait(8000);
    const loadIds = await stopLoad(ctx);
    expectAllRunning(ctx, 'by the PostgreSQL restart (each reconnects by itself)');
    await ctx.quiesce(120_000);
    await expectNoSpuriousNoValidHost(ctx, [...ids, ...loadIds], 'the database restart');
  },
};
