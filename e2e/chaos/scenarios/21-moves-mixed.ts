import { Mover } from '../mover';
import type { Scenario } from '../scenario';
import { expectAllRunning } from './03-outage-checks';

/**
 * Moves mixed into builds (the soak's mix): a background create load (some deleted soon after)
 * with reschedulable build failures and failing instance steps (10% of every step, 30% of the
 * destinations' preps), and at the same time a background mover asking every
 * action a server's state allows — cold migrate, resize up and down, live migrate, stop/start,
 * soft and hard reboot, rebuild, shelve/unshelve, confirm/revert, delete — on the servers as
 * they come up; half-way a compute process and then a cell conductor are SIGKILLed and restarted
 * with builds and moves in flight. The invariants judge the end state (settled, no migration in
 * progress, placement = instances + open migrations, one host each); the scenario checks that
 * the API answered every action with 2xx, or 409/400/404 when the server's state had changed
 * meanwhile — never 5xx.
 */
export const movesMixed: Scenario = {
  name: 'moves-mixed-into-builds',
  summary:
    'builds (30% failing) with every server action mixed in (10-30% of steps failing), a compute and a cell conductor SIGKILLed mid-way: all settle, placement exact',
  ci: false,
  moves: true,
  timeoutMs: 240_000,
  async run(ctx) {
    await ctx.faults.set('all', {
      failRate: ctx.profile.name === 'soak' ? 0.45 : 0.3,
      // 10% of every instance step fails, 30% of the destinations' preps (the moves go on to their alternates)
      steps: {
        '*': { failRate: 0.1 },
        prep_resize: { failRate: 0.3 },
        pre_live_migration: { failRate: 0.3 },
        rebuild_evacuated: { failRate: 0.3 },
      },
    });
    const full = ctx.profile.name !== 'ci';
    ctx.load.start({ rate: full ? 6 : 3, deleteShare: 0.15 });
    await ctx.boot(ctx.scale(24), { burst: 12 });
    await ctx.wait(2000);
    const mover = new Mover(ctx, ctx.rng.fork());
    mover.start({ rate: full ? 6 : 3, candidates: () => ctx.liveServers() });
    const phaseMs = full ? 25_000 : 12_000;
    await ctx.wait(phaseMs);
    const compute = ctx.rng.pick(ctx.stack.servicesOf('compute'));
    await ctx.stack.kill(compute, 'SIGKILL');
    ctx.log(`${compute} SIGKILLed with builds and moves in flight`);
    await ctx.wait(ctx.rng.int(1000, 4000));
    await ctx.stack.start(compute);
    await ctx.wait(phaseMs / 2);
    const conductor = ctx.rng.pick(ctx.stack.servicesOf('cell-conductor'));
    await ctx.stack.kill(conductor, 'SIGKILL');
    ctx.log(`${conductor} SIGKILLed with builds and moves in flight`);
    await ctx.wait(ctx.rng.int(1000, 4000));
    await ctx.stack.start(conductor);
    expectAllRunning(ctx, 'after the compute and the cell conductor were SIGKILLed and restarted');
    await ctx.wait(phaseMs / 2);
    const asked = await mover.stop();
    const created = await ctx.load.stop();
    ctx.note('mover', asked);
    ctx.note('loadCreated', created.length);
    ctx.log(`mover asked ${JSON.stringify(asked)}; load created ${created.length}`);
    ctx.note('answers', mover.answers);
    ctx.expect(Object.values(asked).reduce((a, b) => a + b, 0) > 0, 'the mover asked for actions');
    const wrong = Object.entries(mover.answers).filter(([k]) => !/ (2\d\d|400|404|409)$/.test(k));
    ctx.expect(
      wrong.length === 0,
      `every action answered 2xx, or 400/404/409 when the state had changed meanwhile${wrong.length ? `: ${JSON.stringify(Object.fromEntries(wrong))}` : ''}`,
    );
  },
};
