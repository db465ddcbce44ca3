import { Tally } from '../checks';
import { countBy, expectExactAllocations, lastMigrationOf, migrationsOf, settledServers } from '../move-checks';
import type { Scenario, ServerActionName } from '../scenario';
import { expectAllRunning } from './03-outage-checks';

/**
 * SIGKILL of a cell conductor while moves run through it: servers are cold-migrated, resized and
 * live-migrated all at once (30% of destination preps failing, so alternates are claimed too), the conductor of one cell is killed a moment later (its step
 * results and actions unacked, its step watchdog stopped) and restarted 1–5 s after. Every move
 * must end — VERIFY_RESIZE (migration finished), or ACTIVE after a live migration (completed),
 * or back as before with the migration `error` — none left in a task state or a migration in
 * progress (settled, migrations-final), placement exact. The VERIFY_RESIZE ones are left so for
 * the invariant check (a finished migration holding the source).
 */
export const cellConductorKillMoves: Scenario = {
  name: 'cell-conductor-kill-mid-move',
  summary: 'SIGKILL a cell conductor while migrations, resizes and live migrations run through it, restart it: every move ends, placement exact',
  ci: true,
  moves: true,
  timeoutMs: 240_000,
  async run(ctx) {
    // a destination that fails its prep sends the move on to the next alternate, in the cell, while the conductor is down or back
    await ctx.faults.set('all', { steps: { prep_resize: { failRate: 0.3 }, pre_live_migration: { failRate: 0.3 } } });
    const booted = await ctx.boot(ctx.scale(40), { burst: 20 });
    const views = await settledServers(ctx, booted, 90_000);
    const ids = booted.filter((id) => views.get(id)?.status === 'ACTIVE');
    const kinds: ServerActionName[] = ['migrate', 'resize', 'os-migrateLive'];
    const plan = new Map(ids.map((id) => [id, ctx.rng.pick(kinds)]));
    const rounds = ctx.profile.name === 'ci' ? 1 : 2;
    const moved: string[] = [];
    for (let r = 0; r < rounds; r++) {
      const batch = ids.filter((_, i) => i % rounds === r);
      const victim = ctx.rng.pick(ctx.stack.servicesOf('cell-conductor'));
      const answers = await Promise.all(batch.map((id) => ctx.act(id, plan.get(id) ?? 'migrate')));
      ctx.expect(answers.every((a) => a.status === 202), `round ${r + 1}: every move accepted (${JSON.stringify(countBy(answers, (a) => String(a.status)))})`);
      moved.push(...batch);
      await ctx.wait(ctx.rng.int(ctx.stack.shape.buildLatencyMs, 4 * ctx.stack.shape.buildLatencyMs));
      await ctx.stack.kill(victim, 'SIGKILL');
      const downMs = ctx.rng.int(1000, 5000);
      ctx.log(`round ${r + 1}: ${victim} SIGKILLed with ${batch.length} moves in flight (${JSON.stringify(countBy(batch, (id) => plan.get(id) ?? ''))}); down ${downMs} ms`);
      await ctx.wait(downMs);
      await ctx.stack.start(victim);
      expectAllRunning(ctx, `after ${victim} was SIGKILLed and restarted`);
    }
    const after = await settledServers(ctx, moved, 180_000);
    const last = lastMigrationOf(await migrationsOf(ctx, moved));
    const t = new Tally('each move ended: VERIFY_RESIZE (finished), ACTIVE elsewhere (live migration completed), or ACTIVE where it was (migration error, with a fault event)');
    for (const id of moved) {
      const s = after.get(id);
      const m = last.get(id);
      const before = views.get(id)?.['OS-EXT-SRV-ATTR:host'];
      const host = s?.['OS-EXT-SRV-ATTR:host'];
      const ok = (s?.status === 'VERIFY_RESIZE' && m?.status === 'finished' && host !== before)
        || (s?.status === 'ACTIVE' && m?.type === 'live-migration' && m.status === 'completed' && host !== before)
        || (s?.status === 'ACTIVE' && m?.status === 'error' && host === before);
      t.check(ok, () => `${id} (${plan.get(id) ?? ''}): ${s?.status ?? 'gone'} on ${host ?? '-'} (was ${before ?? '-'}), migration ${m?.type ?? '-'} ${m?.status ?? 'none'}`);
    }
    t.report(ctx);
    ctx.note('outcomes', countBy(moved, (id) => `${plan.get(id) ?? ''}:${after.get(id)?.status ?? 'gone'}:${last.get(id)?.status ?? 'none'}`));
    await expectExactAllocations(ctx, moved, 'once every move ended');
  },
};
