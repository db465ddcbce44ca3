import {
  bootSettled,
  countBy,
  expectAnswers,
  expectExactAllocations,
  expectMoveOutcomes,
  flavorName,
  hostOf,
  settledServers,
} from '../move-checks';
import type { Scenario, ServerActionName } from '../scenario';

/**
 * Revert racing confirm: servers resized to VERIFY_RESIZE get a confirmResize and a
 * revertResize at (nearly) the same moment — in random order, 0–30 ms apart, some of them sent
 * twice (a client retrying). Exactly one decision wins per server: either it is ACTIVE on the
 * destination with the new flavor and its migration `confirmed`, or ACTIVE on its source with the
 * old flavor and its migration `reverted`; never both, never neither; the loser is refused with
 * 409 (Nova: not in VERIFY_RESIZE any more, or another action pending) or 400 (Nova's "Instance
 * has not been resized." once the migration left `finished`); placement exact at the end.
 */
export const revertRacingConfirm: Scenario = {
  name: 'revert-racing-confirm',
  summary:
    'confirmResize and revertResize sent together (some twice) on VERIFY_RESIZE servers: exactly one wins, migration and placement agree',
  ci: true,
  moves: true,
  timeoutMs: 180_000,
  async run(ctx) {
    const { views, active: ids } = await bootSettled(ctx, ctx.scale(30), 15);
    const source = new Map(ids.map((id) => [id, hostOf(views.get(id))]));
    const resizes = await Promise.all(ids.map((id) => ctx.act(id, 'resize', { flavorRef: '2' })));
    expectAnswers(ctx, resizes, 'every resize accepted');
    const resized = await settledServers(ctx, ids, 120_000);
    const verify = ids.filter((id) => resized.get(id)?.status === 'VERIFY_RESIZE');
    ctx.expect(
      verify.length === ids.length,
      `every resize reached VERIFY_RESIZE (${JSON.stringify(countBy(resized.values(), (s) => s.status))})`,
    );
    const dest = new Map(verify.map((id) => [id, hostOf(resized.get(id))]));

    const statuses: Record<string, Record<string, number>> = { confirmResize: {}, revertResize: {} };
    await Promise.all(
      verify.map(async (id) => {
        const order: ServerActionName[] = ctx.rng.next() < 0.5 ? ['confirmResize', 'revertResize'] : ['revertResize', 'confirmResize'];
        if (ctx.rng.next() < 0.3) order.push(ctx.rng.pick(order));
        const gaps = order.map(() => ctx.rng.int(0, 30));
        await Promise.all(
          order.map(async (action, i) => {
            await ctx.wait(gaps[i] ?? 0);
            const r = await ctx.act(id, action);
            const by = statuses[action] ?? {};
            by[String(r.status)] = (by[String(r.status)] ?? 0) + 1;
          }),
        );
      }),
    );
    ctx.note('answers', statuses);
    const bad = Object.entries(statuses).flatMap(([a, by]) =>
      Object.keys(by)
        .filter((st) => !['202', '204', '400', '409'].includes(st))
        .map((st) => `${a} ${st}`),
    );
    ctx.expect(bad.length === 0, `every confirm/revert answered 204/202, or 409/400 (${JSON.stringify(statuses)})`);

    const { last } = await expectMoveOutcomes(
      ctx,
      verify,
      120_000,
      'exactly one decision won: confirmed (ACTIVE m1.small on the destination) or reverted (ACTIVE m1.tiny on the source)',
      (id, s, m) =>
        (s?.status === 'ACTIVE' && hostOf(s) === dest.get(id) && flavorName(s) === 'm1.small' && m?.status === 'confirmed') ||
        (s?.status === 'ACTIVE' && hostOf(s) === source.get(id) && flavorName(s) === 'm1.tiny' && m?.status === 'reverted'),
      (id, s, m) =>
        `${id}: ${s?.status ?? 'gone'} on ${hostOf(s)} as ${flavorName(s)} (source ${source.get(id) ?? '-'}, dest ${dest.get(id) ?? '-'}), migration ${m?.status ?? 'none'}`,
    );
    ctx.note(
      'winners',
      countBy(verify, (id) => last.get(id)?.status ?? 'none'),
    );
    await expectExactAllocations(ctx, verify, 'after the races');
  },
};
