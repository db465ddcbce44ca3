import type { Scenario } from '../scenario';
import { expectAllRunning, startFailingLoad, stopLoad } from './03-outage-checks';

/**
 * SIGKILL of the super-conductor with schedule_and_build_instances casts in flight (a burst
 * just accepted, some mid-scheduling, some queued), then a restart: the unacked casts are
 * redelivered and finished exactly once (instances already placed in a cell are resumed, not
 * scheduled again); every build settles, allocations exact.
 */
export const superConductorKill: Scenario = {
  name: 'super-conductor-kill',
  summary: 'SIGKILL the super-conductor with casts in flight, restart: every build settles once, allocations exact',
  ci: true,
  async run(ctx) {
    await startFailingLoad(ctx, 0.3, 4);
    const rounds = ctx.profile.name === 'ci' ? 1 : 2;
    for (let r = 0; r < rounds; r++) {
      const burst = ctx.boot(ctx.scale(60), { burst: 30 });
      await ctx.wait(ctx.rng.int(50, 400));
      await ctx.stack.kill('super-conductor', 'SIGKILL');
      const ids = await burst;
      const downMs = ctx.rng.int(1000, 4000);
      ctx.log(`round ${r + 1}: super-conductor SIGKILLed while a burst of ${ids.length} was being cast; down ${downMs} ms`);
      await ctx.wait(downMs);
      await ctx.stack.start('super-conductor');
      expectAllRunning(ctx, 'after the super-conductor was SIGKILLed and restarted');
      await ctx.wait(2000);
    }
    await stopLoad(ctx);
    // the casts queued while it was down (behind the previous cleanup's deletes) are handled now: with the faults still on
    const left = await ctx.quiesce(120_000);
    ctx.expect(left.length === 0, `every build cast before, during and after the kills settled (${left.length} not yet)`);
  },
};
