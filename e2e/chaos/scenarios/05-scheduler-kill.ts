import { MAX_RETRIES, serverViews } from '../checks';
import type { Scenario } from '../scenario';
import { expectAllRunning, expectNoSpuriousNoValidHost, stopLoad } from './03-outage-checks';

/**
 * SIGKILL of one scheduler replica under load: while it stays down the other replica(s) keep
 * serving (a burst booted during the outage settles ACTIVE before the replica returns, none
 * NoValidHost), then it is restarted.
 */
export const schedulerKill: Scenario = {
  name: 'scheduler-kill',
  summary: 'SIGKILL one scheduler replica under load: the others keep serving (builds settle while it is down), restart',
  ci: true,
  async run(ctx) {
    const schedulers = ctx.stack.servicesOf('scheduler');
    if (schedulers.length < 2) throw new Error(`needs 2 scheduler replicas or more, the stack has ${schedulers.length}`);
    const victim = ctx.rng.pick(schedulers);
    if (ctx.profile.name === 'soak') await ctx.faults.set('all', { failRate: 0.45 });
    ctx.load.start({ rate: ctx.profile.name === 'ci' ? 4 : 8 });
    await ctx.wait(2000);
    await ctx.stack.kill(victim, 'SIGKILL');
    ctx.log(`${victim} SIGKILLed under load`);
    const during = await ctx.boot(ctx.scale(60), { burst: 10 });
    const settled = await ctx
      .waitFor(
        'the burst booted while a replica is down to settle',
        async () => {
          const v = await serverViews(ctx, during);
          return during.every((id) => ['ACTIVE', 'ERROR'].includes(v.get(id)?.status ?? '')) ? v : undefined;
        },
        60_000,
      )
      .catch(() => undefined);
    ctx.expect(settled !== undefined, `${during.length} builds booted while ${victim} was down settled without it`);
    ctx.expect(!ctx.stack.isRunning(victim), `${victim} stayed down meanwhile`);
    const ok = settled
      ? during.filter((id) => settled.get(id)?.status === 'ACTIVE' || (settled.get(id)?.fault?.message ?? '').startsWith(MAX_RETRIES))
          .length
      : 0;
    ctx.expect(ok === during.length, `all ${during.length} of them ACTIVE, or ERROR after every alternate failed (${ok})`);
    await expectNoSpuriousNoValidHost(ctx, during, `a dead scheduler replica`);
    await ctx.stack.start(victim);
    await ctx.wait(3000);
    await stopLoad(ctx);
    expectAllRunning(ctx, `after ${victim} was restarted`);
  },
};
