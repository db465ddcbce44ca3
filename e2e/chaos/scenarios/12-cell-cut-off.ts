import { serverViews } from '../checks';
import type { Scenario } from '../scenario';
import { activeByCell, admin, expectAllRunning, startFailingLoad, stopLoad } from './03-outage-checks';

/**
 * One cell cut off from its bus for a while: its user's permissions on its vhost are revoked
 * and all its connections closed (its conductor, its compute and the super-conductor's link to
 * that cell are refused on every reconnect), then the permissions come back. Meanwhile the
 * other cells keep building; afterwards the cut cell catches up: every build scheduled there
 * during the cut ends ACTIVE, none lost, none stuck.
 */
export const cellCutOff: Scenario = {
  name: 'cell-cut-off',
  summary: 'one cell cut off from its bus (permissions revoked, connections closed), then back: others keep building, it catches up',
  ci: false,
  timeoutMs: 240_000,
  async run(ctx) {
    const cells = ctx.stack.topology().cells;
    const cut = ctx.rng.pick(cells);
    const url = new URL(cut.transportUrl);
    const user = decodeURIComponent(url.username);
    const vhost = decodeURIComponent(url.pathname.slice(1));
    await startFailingLoad(ctx, 0.3, 3);
    const cutMs = ctx.profile.name === 'ci' ? 15_000 : 25_000;
    let during: string[] = [];
    let duringByCell: Record<string, number> = {};
    const t0 = Date.now();
    try {
      await admin('rabbitmqctl', ['clear_permissions', '-p', vhost, user]);
      await admin('rabbitmqctl', ['close_all_user_connections', user, 'chaos: cell cut off from its bus']);
      ctx.log(`${cut.name} cut off: ${user} has no permission on ${vhost}, its connections closed; for ${cutMs / 1000} s`);
      during = await ctx.boot(ctx.scale(60), { burst: 10, pauseMs: 200 });
      await ctx.wait(Math.max(0, cutMs - (Date.now() - t0)));
      duringByCell = await activeByCell(ctx, during);
    } finally {
      await admin('rabbitmqctl', ['set_permissions', '-p', vhost, user, '.*', '.*', '.*']);
      ctx.log(`${cut.name} back on its bus after ${Date.now() - t0} ms`);
    }
    ctx.note('cutCell', cut.name);
    ctx.note('cutMs', Date.now() - t0);
    ctx.note('activeDuringCutByCell', duringByCell);
    const others = cells.filter((c) => c.name !== cut.name).map((c) => c.name);
    ctx.expect(
      others.every((c) => (duringByCell[c] ?? 0) > 0),
      `the other cells kept building during the cut (${JSON.stringify(duringByCell)})`,
    );
    ctx.expect(
      (duringByCell[cut.name] ?? 0) === 0,
      `the cut was real: nothing booted during it went ACTIVE in ${cut.name} meanwhile (${duringByCell[cut.name] ?? 0})`,
    );
    expectAllRunning(ctx, `while ${cut.name} was cut off (its processes keep reconnecting)`);
    const settled = await ctx
      .waitFor(
        `${cut.name} to catch up`,
        async () => {
          const v = await serverViews(ctx, during);
          return during.every((id) => ['ACTIVE', 'ERROR'].includes(v.get(id)?.status ?? '')) ? v : undefined;
        },
        150_000,
      )
      .catch(() => undefined);
    ctx.expect(settled !== undefined, `every build booted during the cut settled after it (${during.length})`);
    const after = await activeByCell(ctx, during);
    ctx.note('activeAfterCutByCell', after);
    ctx.expect(
      (after[cut.name] ?? 0) > 0,
      `${cut.name} caught up: builds scheduled there during the cut are ACTIVE (${JSON.stringify(after)})`,
    );
    await stopLoad(ctx);
  },
};
