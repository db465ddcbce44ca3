import { bootSettled, countBy, settledServers } from '../move-checks';
import type { ChaosContext, Scenario, ServerActionName } from '../scenario';

/** One server's story: the moves asked of it, then (maybe) a delete at some moment of them. */
type Plan = { moves: ServerActionName[]; deleteAt: 'never' | 'at-once' | 'mid-move' | 'verify-resize' | 'mid-decision' | 'shelved' };

const PLANS: readonly Plan[] = [
  { moves: ['migrate'], deleteAt: 'at-once' },
  { moves: ['resize'], deleteAt: 'at-once' },
  { moves: ['os-migrateLive'], deleteAt: 'at-once' },
  { moves: ['migrate'], deleteAt: 'mid-move' },
  { moves: ['resize'], deleteAt: 'mid-move' },
  { moves: ['os-migrateLive'], deleteAt: 'mid-move' },
  { moves: ['resize'], deleteAt: 'verify-resize' },
  { moves: ['migrate'], deleteAt: 'verify-resize' },
  { moves: ['resize', 'confirmResize'], deleteAt: 'mid-decision' },
  { moves: ['resize', 'revertResize'], deleteAt: 'mid-decision' },
  { moves: ['shelve'], deleteAt: 'mid-move' },
  { moves: ['shelve'], deleteAt: 'shelved' },
  { moves: ['shelve', 'unshelve'], deleteAt: 'mid-decision' },
  { moves: ['resize'], deleteAt: 'never' },
  { moves: ['os-migrateLive'], deleteAt: 'never' },
  { moves: ['shelve', 'unshelve'], deleteAt: 'never' },
];

const RESTING: Record<string, string> = { resize: 'VERIFY_RESIZE', migrate: 'VERIFY_RESIZE', shelve: 'SHELVED_OFFLOADED' };

async function story(ctx: ChaosContext, id: string, plan: Plan, statuses: Record<string, number>): Promise<void> {
  const latency = ctx.stack.shape.buildLatencyMs;
  const del = async (): Promise<void> => {
    const st = await ctx.deleteServer(id);
    statuses[String(st)] = (statuses[String(st)] ?? 0) + 1;
  };
  for (const [i, move] of plan.moves.entries()) {
    const r = await ctx.act(id, move);
    if (r.status >= 300) {
      ctx.log(`${id}: ${move} ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
      return;
    }
    const lastMove = i === plan.moves.length - 1;
    if (lastMove && plan.deleteAt === 'at-once') {
      await ctx.wait(ctx.rng.int(0, 50));
      return del();
    }
    if (lastMove && (plan.deleteAt === 'mid-move' || plan.deleteAt === 'mid-decision')) {
      await ctx.wait(ctx.rng.int(0, 6 * latency + 500));
      return del();
    }
    // wait for the move to rest before the next step of the story
    const rest = RESTING[move];
    const s = await settledServers(ctx, [id], 120_000);
    if (rest !== undefined && s.get(id)?.status !== rest) {
      ctx.log(`${id}: after ${move} ${s.get(id)?.status ?? 'gone'}, not ${rest}`);
      return;
    }
  }
  if (plan.deleteAt === 'verify-resize' || plan.deleteAt === 'shelved') await del();
}

/**
 * Deletes racing moves: each server gets a story — a cold migration, resize, live migration,
 * shelve (offload) or unshelve, a confirm or revert of a resize — and is deleted at some moment
 * of it: right after the action's 202, while it runs, in VERIFY_RESIZE (the migration's source
 * allocation must go too), during the confirm or revert, or when shelved; some are kept. Every
 * delete must leave nothing behind (no instance, allocation of the instance or of its
 * migrations, guest on either host: the invariants), every other server settles, no migration
 * is left in progress.
 */
export const deletesRacingMoves: Scenario = {
  name: 'deletes-racing-moves',
  summary: 'deletes at random moments of migrations, resizes, live migrations, confirm/revert and shelve/unshelve: nothing left behind',
  ci: false,
  moves: true,
  timeoutMs: 240_000,
  async run(ctx) {
    const { active: ids } = await bootSettled(ctx, ctx.scale(48), 16);
    const statuses: Record<string, number> = {};
    const plans = new Map(ids.map((id, i) => [id, PLANS[i % PLANS.length] as Plan]));
    await Promise.all(
      ids.map(async (id) => {
        await ctx.wait(ctx.rng.int(0, 1000));
        await story(ctx, id, plans.get(id) as Plan, statuses);
      }),
    );
    ctx.note(
      'stories',
      countBy(plans.values(), (p) => `${p.moves.join('+')}@${p.deleteAt}`),
    );
    ctx.note('deleteStatuses', statuses);
    ctx.expect(
      Object.keys(statuses).every((s) => s === '204'),
      `every racing delete answered 204 (${JSON.stringify(statuses)})`,
    );
  },
};
