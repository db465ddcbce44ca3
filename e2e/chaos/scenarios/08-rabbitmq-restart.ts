import { serverViews } from '../checks';
import type { Scenario } from '../scenario';
import { activeByCell, admin, expectAllRunning, startFailingLoad, stopLoad } from './03-outage-checks';

/**
 * RabbitMQ stopped and started under load (`rabbitmqctl stop_app` / `start_app`, a few
 * seconds; it disrupts everything on the machine, so the outage is kept short): every service
 * reconnects and re-declares its topology by itself (none crashes, none is restarted), the
 * casts accepted before and during the outage are delivered, a burst booted afterwards builds
 * in every cell.
 */
export const rabbitmqRestart: Scenario = {
  name: 'rabbitmq-restart',
  summary: 'RabbitMQ stop_app/start_app under load: every service reconnects by itself, nothing lost, builds resume',
  ci: false,
  timeoutMs: 180_000,
  async run(ctx) {
    await startFailingLoad(ctx, 0.3, 4, 3000);
    const t0 = Date.now();
    let stopped = false;
    try {
      await admin('rabbitmqctl', ['stop_app']);
      stopped = true;
      ctx.log(`broker stopped (stop_app took ${Date.now() - t0} ms)`);
      await ctx.wait(ctx.rng.int(1000, 3000));
    } finally {
      await admin('rabbitmqctl', ['start_app']);
      if (stopped) ctx.log('broker started');
    }
    const outageMs = Date.now() - t0;
    ctx.note('brokerOutageMs', outageMs);
    ctx.log(`broker outage ${outageMs} ms (stop_app to start_app returned)`);
    await ctx.wait(5000);
    await stopLoad(ctx);
    expectAllRunning(ctx, 'during the broker restart (each reconnects by itself)');
    // the consumers are back: a burst after the restart builds in every cell
    const after = await ctx.boot(ctx.scale(40), { burst: 10 });
    const views = await ctx
      .waitFor(
        'the burst after the broker restart to settle',
        async () => {
          const v = await serverViews(ctx, after);
          return after.every((id) => ['ACTIVE', 'ERROR'].includes(v.get(id)?.status ?? '')) ? v : undefined;
        },
        90_000,
      )
      .catch(() => undefined);
    ctx.expect(views !== undefined, `a burst of ${after.length} booted after the restart settled within 90 s`);
    const byCell = await activeByCell(ctx, after);
    ctx.note('afterRestartActiveByCell', byCell);
    const cells = ctx.stack.topology().cells.map((c) => c.name);
    ctx.expect(
      cells.every((c) => (byCell[c] ?? 0) > 0),
      `every cell builds again after the restart (${JSON.stringify(byCell)})`,
    );
  },
};
