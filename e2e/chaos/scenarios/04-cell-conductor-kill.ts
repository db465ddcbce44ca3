import type { Scenario } from '../scenario';
import { expectAllRunning } from './03-outage-checks';

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
    // the soak fails more builds (its summary must show >= 30% of builds failing)
    await ctx.faults.set('all', { failRate: ctx.profile.name === 'soak' ? 0.45 : 0.4 });
    const conductors = ctx.stack.servicesOf('cell-conductor');
    ctx.load.start({ rate: ctx.profile.name === 'ci' ? 4 : 8 });
    await ctx.wait(2000);
    const rounds = ctx.profile.name === 'ci' ? 1 : 3;
    for (let r = 0; r < rounds; r++) {
      const victim = ctx.rng.pick(conductors);
      const burst = await ctx.boot(ctx.scale(40), { burst: 20 });
      // reschedules start about one build latency after the casts reach the computes
      await ctx.wait(ctx.rng.int(ctx.stack.shape.buildLatencyMs, 3 * ctx.stack.shape.buildLatencyMs));
      await ctx.stack.kill(victim, 'SIGKILL');
      const downMs = ctx.rng.int(1000, 5000);
      ctx.log(`round ${r + 1}: ${victim} SIGKILLed with ${burst.length} builds just accepted; down ${downMs} ms`);
      await ctx.wait(downMs);
      await ctx.stack.start(victim);
      expectAllRunning(ctx, `after ${victim} was SIGKILLed and restarted`);
      await ctx.wait(2000);
    }
    ctx.note('loadCreated', (await ctx.load.stop()).length);
  },
};
