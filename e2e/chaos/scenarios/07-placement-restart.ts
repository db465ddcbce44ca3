import type { Scenario } from '../scenario';
import { expectAllRunning, expectNoSpuriousNoValidHost, startFailingLoad, stopLoad } from './03-outage-checks';

/**
 * Placement restarted under load (once SIGTERM, once SIGKILL in the full profile), with 30% of
 * builds rescheduling (replace-claims) and a burst cast right before: the scheduler's claims
 * and the conductors' replace-claims fail during the outage and are retried, never turned into
 * NoValidHost (the cloud has room) or lost; allocations exact afterwards.
 */
export const placementRestart: Scenario = {
  name: 'placement-restart',
  summary: 'placement restarted under load (30% reschedules): no NoValidHost from the outage, none lost, allocations exact',
  ci: true,
  async run(ctx) {
    await startFailingLoad(ctx, 0.3, 4);
    const ids: string[] = [];
    const signals: NodeJS.Signals[] = ctx.profile.name === 'ci' ? ['SIGKILL'] : ['SIGTERM', 'SIGKILL'];
    for (const signal of signals) {
      ids.push(...(await ctx.boot(ctx.scale(40), { burst: 20 })));
      const t0 = Date.now();
      await ctx.stack.kill('placement', signal);
      await ctx.wait(ctx.rng.int(500, 3000));
      await ctx.stack.start('placement');
      ctx.log(`placement ${signal} + start: down ${Date.now() - t0} ms`);
      expectAllRunning(ctx, `after placement's ${signal} restart`);
      await ctx.wait(3000);
    }
    const loadIds = await stopLoad(ctx);
    await ctx.quiesce(120_000);
    await expectNoSpuriousNoValidHost(ctx, [...ids, ...loadIds], 'the placement outage');
  },
};
