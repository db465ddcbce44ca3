import type { Scenario } from '../scenario';
import { killAndRestart, startFailingLoad, stopLoad } from './03-outage-checks';

/**
 * SIGKILL of a cell conductor while builds are being rescheduled (40% of builds fail
 * reschedulably, so build_instances casts and replace-claims are in flight), then a restart:
 * the casts it held unacked are redelivered; each reschedule happens once (the (host, attempt)
 * guard), every build settles, allocations stay exact.
 */
export const cellConductorKill: Scenario = {
  name: 'cell-conductor-kill',
  summary: 'SIGKILL a cell conductor during reschedules (40% fail), restart it: every build settles, allocations exact',
  ci: true,
  async run(ctx) {
    const conductors = ctx.stack.servicesOf('cell-conductor');
    await startFailingLoad(ctx, 0.4, 4);
    const rounds = ctx.profile.name === 'ci' ? 1 : 3;
    for (let r = 0; r < rounds; r++) {
      const victim = ctx.rng.pick(conductors);
      const burst = await ctx.boot(ctx.scale(40), { burst: 20 });
      // reschedules start about one build latency after the casts reach the computes
      await ctx.wait(ctx.rng.int(ctx.stack.shape.buildLatencyMs, 3 * ctx.stack.shape.buildLatencyMs));
      await killAndRestart(ctx, victim, r + 1, `${burst.length} builds just accepted`);
      await ctx.wait(2000);
    }
    await stopLoad(ctx);
  },
};
