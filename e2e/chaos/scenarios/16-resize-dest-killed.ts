import { Tally } from '../checks';
import { ExtraCompute } from '../extra-compute';
import {
  bootSettled,
  computeServices,
  countBy,
  deleteServersOn,
  discoverHosts,
  expectAnswers,
  expectExactAllocations,
  expectMoveOutcomes,
  flavorName,
  forgetHosts,
  hostOf,
  settledServers,
  updateComputeService,
  waitServicesUp,
} from '../move-checks';
import type { Scenario } from '../scenario';

/**
 * The destination of resizes dies mid-resize: servers on one cell's own hosts are resized
 * (m1.tiny → m1.small) while those hosts are disabled, so every destination (and alternate) is
 * one of two extra hosts run by one extra compute process; that process is SIGKILLed at a
 * random moment of the resizes and comes back 1–5 s later (its queued steps are redelivered).
 * Each resize ends in VERIFY_RESIZE on an extra host with the new flavor, or back ACTIVE on its
 * source with the old one (migration `error`); then half are confirmed and half reverted.
 * Placement is checked exactly after each phase, while the extra hosts still exist.
 */
export const resizeDestKilled: Scenario = {
  name: 'resize-dest-compute-killed',
  summary:
    'SIGKILL the destination compute mid-resize, restart it: each resize VERIFY_RESIZE or back on its source; confirm/revert; placement exact',
  ci: false,
  moves: true,
  baselineFaults: false,
  timeoutMs: 300_000,
  async run(ctx) {
    const cell = ctx.rng.pick(ctx.stack.topology().cells);
    const own = (h: string): boolean => h.startsWith(`${cell.name}-compute-`);
    const { booted, views, active } = await bootSettled(ctx, ctx.scale(24), 12);
    const ids = active.filter((id) => own(hostOf(views.get(id))));
    ctx.expect(ids.length > 0, `servers ACTIVE on ${cell.name}'s own hosts to resize (${ids.length} of ${booted.length})`);
    const source = new Map(ids.map((id) => [id, hostOf(views.get(id))]));
    const extra = new ExtraCompute(ctx, cell, `${cell.name}-movedest-1`, 2);
    const ownHosts = (await computeServices(ctx)).map((s) => s.host).filter(own);
    try {
      await extra.start();
      await discoverHosts(ctx);
      await waitServicesUp(ctx, extra.hostNames);
      for (const h of ownHosts)
        await updateComputeService(ctx, h, { status: 'disabled', disabled_reason: 'chaos: resizes go to the extra hosts' });
      await ctx.wait(3000); // the schedulers' host records catch up with the disable
      ctx.log(`${ids.length} servers on ${cell.name}'s own hosts (disabled now) resize to ${extra.hostNames.join('/')} (one process)`);

      const answers = await Promise.all(ids.map((id) => ctx.act(id, 'resize', { flavorRef: '2' })));
      expectAnswers(ctx, answers, 'every resize accepted');
      await ctx.wait(ctx.rng.int(0, 4 * ctx.stack.shape.buildLatencyMs));
      await extra.stop('SIGKILL');
      const downMs = ctx.rng.int(1000, 5000);
      ctx.log(`${extra.host}'s process SIGKILLed mid-resize; down ${downMs} ms`);
      await ctx.wait(downMs);
      await extra.start();

      const { servers: after } = await expectMoveOutcomes(
        ctx,
        ids,
        180_000,
        'each resize ended VERIFY_RESIZE on an extra host as m1.small (migration finished) or ACTIVE on its source as m1.tiny (migration error)',
        (id, s, m) =>
          (s?.status === 'VERIFY_RESIZE' &&
            extra.hostNames.includes(hostOf(s)) &&
            flavorName(s) === 'm1.small' &&
            m?.status === 'finished') ||
          (s?.status === 'ACTIVE' && hostOf(s) === source.get(id) && flavorName(s) === 'm1.tiny' && m?.status === 'error'),
        (id, s, m) =>
          `${id}: ${s?.status ?? 'gone'} on ${hostOf(s)} as ${flavorName(s)}, migration ${m?.type ?? '-'} ${m?.status ?? 'none'}${s?.fault?.message ? ` ("${s.fault.message}")` : ''}`,
      );
      ctx.note(
        'afterKill',
        countBy(after.values(), (s) => s.status),
      );
      await expectExactAllocations(ctx, ids, 'after the destination came back');

      // the user decides: half confirmed, half reverted
      const verify = ids.filter((id) => after.get(id)?.status === 'VERIFY_RESIZE');
      const confirm = new Set(ctx.rng.shuffle([...verify]).slice(0, Math.ceil(verify.length / 2)));
      const decided = await Promise.all(verify.map((id) => ctx.act(id, confirm.has(id) ? 'confirmResize' : 'revertResize')));
      expectAnswers(ctx, decided, 'confirm 204 / revert 202', [204, 202]);
      const end = await settledServers(ctx, verify, 120_000);
      const decision = new Tally('confirmed: ACTIVE m1.small on the extra host; reverted: ACTIVE m1.tiny on the source');
      for (const id of verify) {
        const s = end.get(id);
        const ok = confirm.has(id)
          ? s?.status === 'ACTIVE' && hostOf(s) === hostOf(after.get(id)) && flavorName(s) === 'm1.small'
          : s?.status === 'ACTIVE' && hostOf(s) === source.get(id) && flavorName(s) === 'm1.tiny';
        decision.check(
          ok,
          () => `${id} (${confirm.has(id) ? 'confirmed' : 'reverted'}): ${s?.status ?? 'gone'} on ${hostOf(s)} as ${flavorName(s)}`,
        );
      }
      decision.report(ctx);
      await expectExactAllocations(ctx, ids, 'after confirm and revert');
      ctx.note('confirmed', confirm.size);
      ctx.note('reverted', verify.length - confirm.size);
    } finally {
      for (const h of ownHosts) await updateComputeService(ctx, h, { status: 'enabled' }).catch(() => undefined);
      if (!extra.running) await extra.start().catch(() => undefined);
      await deleteServersOn(ctx, extra.hostNames).catch((e: unknown) =>
        ctx.log(`deleting the extra hosts' servers: ${(e as Error).message}`),
      );
      await extra.stop('SIGTERM');
      await forgetHosts(ctx, extra.hostNames).catch((e: unknown) => ctx.expect(false, `the extra hosts removed: ${(e as Error).message}`));
    }
  },
};
