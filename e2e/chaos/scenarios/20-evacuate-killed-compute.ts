import { Tally } from '../checks';
import { ExtraCompute } from '../extra-compute';
import {
  bootSettled,
  computeServices,
  countBy,
  deleteServersOn,
  discoverHosts,
  expectExactAllocations,
  forgetHosts,
  hostOf,
  migrationsOf,
  settledServers,
  updateComputeService,
  waitServicesUp,
} from '../move-checks';
import type { ChaosContext, Scenario } from '../scenario';

/** Disables (or enables again) the stack's own compute hosts, so boots land on the extra ones. */
async function setOwnHosts(ctx: ChaosContext, status: 'enabled' | 'disabled'): Promise<void> {
  for (const s of (await computeServices(ctx)).filter((x) => /^cell\d+-compute-\d+$/.test(x.host))) {
    await updateComputeService(
      ctx,
      s.host,
      status === 'disabled' ? { status, disabled_reason: 'chaos: boots go to the hosts to evacuate' } : { status },
    );
  }
}

/** PUT forced_down false until it is taken (Nova refuses while `done` evacuations of the host remain); the last answer. */
async function forceUp(ctx: ChaosContext, host: string): Promise<{ status: number; body: unknown; refusals: number }> {
  let refusals = 0;
  let last: { status: number; body: unknown } = { status: 0, body: undefined };
  await ctx
    .waitFor(
      `${host} forced up`,
      async () => {
        last = await updateComputeService(ctx, host, { forced_down: false });
        if (last.status === 200) return true;
        refusals++;
        return undefined;
      },
      90_000,
    )
    .catch(() => undefined);
  return { ...last, refusals };
}

/**
 * Evacuate after a compute is lost: two extra hosts of one cell (each its own compute process)
 * take servers; one is SIGKILLed for good, the other keeps running (a host cut off but alive, its
 * guests still there); both are forced down through the API (2.53 `forced_down`), and every server
 * on them is evacuated. Each must end ACTIVE on another host of its cell, its migration `done`
 * holding the source while the source is not back. Then the dead compute starts again and both are
 * forced up: each evacuation becomes `completed`, the sources hold no allocation and run no copy
 * of the evacuated servers. An evacuation while the source is up is refused (400, Nova's).
 */
export const evacuateKilledCompute: Scenario = {
  name: 'evacuate-killed-compute',
  summary:
    'a compute killed for good and one cut off: forced down, their servers evacuated (done, source held), sources back: completed, copies and allocations gone',
  ci: false,
  moves: true,
  baselineFaults: false,
  timeoutMs: 300_000,
  async run(ctx) {
    const cell = ctx.rng.pick(ctx.stack.topology().cells);
    const dead = new ExtraCompute(ctx, cell, `${cell.name}-evac-1`);
    const fenced = new ExtraCompute(ctx, cell, `${cell.name}-fenced-1`);
    const sources = [dead.host, fenced.host];
    try {
      await dead.start();
      await fenced.start();
      await discoverHosts(ctx);
      await waitServicesUp(ctx, sources);
      await setOwnHosts(ctx, 'disabled');
      await ctx.wait(3000); // the schedulers' host records catch up with the disables
      const { booted, views, active } = await bootSettled(ctx, Math.max(4, ctx.scale(12)), 6);
      await setOwnHosts(ctx, 'enabled');
      const ids = active.filter((id) => sources.includes(hostOf(views.get(id))));
      const from = new Map(ids.map((id) => [id, hostOf(views.get(id))]));
      ctx.note(
        'onSources',
        countBy(ids, (id) => from.get(id) ?? ''),
      );
      ctx.expect(ids.length > 0, `servers ACTIVE on ${sources.join(' and ')} (${ids.length} of ${booted.length})`);
      await ctx.wait(3000);

      // Nova refuses to evacuate from a compute that is up
      const early = ids[0];
      if (early !== undefined) {
        const r = await ctx.act(early, 'evacuate');
        ctx.expect(
          r.status === 400,
          `evacuate while ${from.get(early) ?? ''} is up refused with 400 (${r.status} ${JSON.stringify(r.body).slice(0, 160)})`,
        );
      }

      await dead.stop('SIGKILL');
      ctx.log(`${dead.host} SIGKILLed for good; ${fenced.host} keeps running, cut off`);
      for (const h of sources) {
        const r = await updateComputeService(ctx, h, { forced_down: true });
        ctx.expect(r.status === 200, `${h} forced down (${r.status} ${JSON.stringify(r.body).slice(0, 160)})`);
      }
      const answers = await Promise.all(ids.map((id) => ctx.act(id, 'evacuate')));
      ctx.expect(
        answers.every((a) => a.status === 200),
        `every evacuate answered 200 (${JSON.stringify(countBy(answers, (a) => String(a.status)))})`,
      );

      const moved = await settledServers(ctx, ids, 150_000);
      const migs = await migrationsOf(ctx, ids);
      const evac = new Map(migs.filter((m) => m.type === 'evacuation').map((m) => [m.instanceUuid, m]));
      // NOTE: the cut-off host still heartbeats: its copies may be destroyed (evacuation completed) while it is forced down
      const t = new Tally(
        `each evacuated server ACTIVE on another host of its cell, its evacuation from ${dead.host} done (source held), from ${fenced.host} done or completed`,
      );
      for (const id of ids) {
        const s = moved.get(id);
        const m = evac.get(id);
        const status = from.get(id) === dead.host ? ['done'] : ['done', 'completed'];
        t.check(
          s?.status === 'ACTIVE' &&
            !sources.includes(hostOf(s)) &&
            hostOf(s).startsWith(`${cell.name}-`) &&
            status.includes(m?.status ?? '') &&
            m?.sourceCompute === from.get(id),
          () =>
            `${id}: ${s?.status ?? 'gone'} on ${hostOf(s)}, evacuation ${m?.status ?? 'none'} from ${m?.sourceCompute ?? '-'}${s?.fault?.message ? ` ("${s.fault.message}")` : ''}`,
        );
      }
      t.report(ctx);
      await expectExactAllocations(ctx, ids, 'while the sources are down (each evacuation holds its source)');
      ctx.note(
        'evacuationsWhileDown',
        countBy(evac.values(), (m) => `${m.sourceCompute ?? ''}:${m.status}`),
      );
      ctx.note('fencedCopiesWhileDown', (await fenced.guests()).filter((g) => ids.includes(g)).length);

      // the sources come back: the dead one restarts, both are forced up
      await dead.start();
      for (const h of sources) {
        const r = await forceUp(ctx, h);
        ctx.expect(
          r.status === 200,
          `${h} forced up (${r.status} ${JSON.stringify(r.body).slice(0, 200)}; refused ${r.refusals} times first)`,
        );
        ctx.note(`forceUpRefusals:${h}`, r.refusals);
      }
      const completed = await ctx
        .waitFor(
          'every evacuation completed once its source is back',
          async () => {
            const ms = (await migrationsOf(ctx, ids)).filter((m) => m.type === 'evacuation');
            return ms.every((m) => m.status === 'completed') ? ms : undefined;
          },
          90_000,
        )
        .catch(async () => (await migrationsOf(ctx, ids)).filter((m) => m.type === 'evacuation'));
      ctx.expect(
        completed.every((m) => m.status === 'completed'),
        `every evacuation completed (${JSON.stringify(countBy(completed, (m) => m.status))})`,
      );
      const copies = [...(await dead.guests()), ...(await fenced.guests())].filter((g) => ids.includes(g));
      ctx.expect(copies.length === 0, `the sources dropped their copies of the evacuated servers (${copies.join(' ') || 'none left'})`);
      await expectExactAllocations(ctx, ids, 'once the sources are back (the evacuations hold nothing)');
      const end = await settledServers(ctx, ids, 30_000);
      ctx.expect(
        ids.every((id) => end.get(id)?.status === 'ACTIVE' && hostOf(end.get(id)) === hostOf(moved.get(id))),
        'the evacuated servers stayed where they were rebuilt',
      );
    } finally {
      await setOwnHosts(ctx, 'enabled').catch(() => undefined);
      for (const h of sources) await updateComputeService(ctx, h, { forced_down: false }).catch(() => undefined);
      for (const x of [dead, fenced]) if (!x.running) await x.start().catch(() => undefined);
      await deleteServersOn(ctx, sources).catch((e: unknown) => ctx.log(`deleting the extra hosts' servers: ${(e as Error).message}`));
      await dead.stop('SIGTERM');
      await fenced.stop('SIGTERM');
      await forgetHosts(ctx, sources).catch((e: unknown) => ctx.expect(false, `the extra hosts removed: ${(e as Error).message}`));
    }
  },
};
