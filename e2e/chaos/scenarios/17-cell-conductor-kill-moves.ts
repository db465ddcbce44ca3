import { bootSettled, countBy, expectAnswers, expectExactAllocations, expectMoveOutcomes } from '../move-checks';
import type { Scenario, ServerActionName } from '../scenario';
import { killAndRestart } from './03-outage-checks';

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
  summary:
    'SIGKILL a cell conductor while migrations, resizes and live migrations run through it, restart it: every move ends, placement exact',
  ci: true,
  moves: true,
  timeoutMs: 240_000,
  async run(ctx) {
    // a destination that fails its prep sends the move on to the next alternate, in the cell, while the conductor is down or back
    await ctx.faults.set('all', { steps: { prep_resize: { failRate: 0.3 }, pre_live_migration: { failRate: 0.3 } } });
    const { views, active: ids } = await bootSettled(ctx, ctx.scale(40), 20);
    const kinds: ServerActionName[] = ['migrate', 'resize', 'os-migrateLive'];
    const plan = new Map(ids.map((id) => [id, ctx.rng.pick(kinds)]));
    const rounds = ctx.profile.name === 'ci' ? 1 : 2;
    const moved: string[] = [];
    for (let r = 0; r < rounds; r++) {
      const batch = ids.filter((_, i) => i % rounds === r);
      const victim = ctx.rng.pick(ctx.stack.servicesOf('cell-conductor'));
      const answers = await Promise.all(batch.map((id) => ctx.act(id, plan.get(id) ?? 'migrate')));
      expectAnswers(ctx, answers, `round ${r + 1}: every move accepted`);
      moved.push(...batch);
      await ctx.wait(ctx.rng.int(ctx.stack.shape.buildLatencyMs, 4 * ctx.stack.shape.buildLatencyMs));
      await killAndRestart(
        ctx,
        victim,
        r + 1,
        `${batch.length} moves in flight (${JSON.stringify(countBy(batch, (id) => plan.get(id) ?? ''))})`,
      );
    }
    const before = (id: string): string | null | undefined => views.get(id)?.['OS-EXT-SRV-ATTR:host'];
    const { servers: after, last } = await expectMoveOutcomes(
      ctx,
      moved,
      180_000,
      'each move ended: VERIFY_RESIZE (finished), ACTIVE elsewhere (live migration completed), or ACTIVE where it was (migration error, with a fault event)',
      (id, s, m) => {
        const host = s?.['OS-EXT-SRV-ATTR:host'];
        return (
          (s?.status === 'VERIFY_RESIZE' && m?.status === 'finished' && host !== before(id)) ||
          (s?.status === 'ACTIVE' && m?.type === 'live-migration' && m.status === 'completed' && host !== before(id)) ||
          (s?.status === 'ACTIVE' && m?.status === 'error' && host === before(id))
        );
      },
      (id, s, m) =>
        `${id} (${plan.get(id) ?? ''}): ${s?.status ?? 'gone'} on ${s?.['OS-EXT-SRV-ATTR:host'] ?? '-'} (was ${before(id) ?? '-'}), migration ${m?.type ?? '-'} ${m?.status ?? 'none'}`,
    );
    ctx.note(
      'outcomes',
      countBy(moved, (id) => `${plan.get(id) ?? ''}:${after.get(id)?.status ?? 'gone'}:${last.get(id)?.status ?? 'none'}`),
    );
    await expectExactAllocations(ctx, moved, 'once every move ended');
  },
};
