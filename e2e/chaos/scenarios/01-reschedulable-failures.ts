import { buildEvents, cellOfInstances, MAX_RETRIES, serverViews, Tally } from '../checks';
import type { Scenario } from '../scenario';

/**
 * Builds failing reschedulably at 10–50% per cell (the computes' fault injection): every server
 * ends ACTIVE, or ERROR with a max-retries fault only once every host it was given failed; every
 * retry stayed in the cell of the first choice.
 */
export const reschedulableFailures: Scenario = {
  name: 'reschedulable-failures',
  summary:
    'builds fail reschedulably at 10-50% per cell: ACTIVE, or ERROR (max retries) after every alternate failed; retries stay in the cell',
  ci: true,
  async run(ctx) {
    for (const cell of ctx.stack.topology().cells) {
      const rate = Math.round((0.1 + ctx.rng.next() * 0.4) * 100) / 100;
      await ctx.faults.set(cell.name, { failRate: rate });
      ctx.log(`${cell.name}: ${Math.round(rate * 100)}% of builds fail reschedulably`);
      ctx.note(`failRate.${cell.name}`, rate);
    }
    const n = ctx.scale(120);
    const ids = await ctx.boot(n, { burst: ctx.rng.int(5, 20) });
    ctx.expect(ids.length === n, `every create accepted (${ids.length}/${n})`);
    const left = await ctx.quiesce(90_000);
    ctx.expect(left.length === 0, `all settled (${left.length} still building)`);

    const views = await serverViews(ctx, ids);
    const cells = await cellOfInstances(ctx);
    const events = await buildEvents(ctx);
    const byInstance = new Map<string, typeof events>();
    for (const e of events) byInstance.set(e.instance_uuid, [...(byInstance.get(e.instance_uuid) ?? []), e]);
    let active = 0;
    let errors = 0;
    let retried = 0;
    const inCell = new Tally('every build attempt in the cell of the first choice');
    const why = new Tally(`every ERROR has "${MAX_RETRIES}"`);
    const exhausted = new Tally('max retries only after every host given failed');
    for (const id of ids) {
      const s = views.get(id);
      const evs = byInstance.get(id) ?? [];
      if (evs.length > 1) retried++;
      const cell = cells.get(id);
      const foreign = evs.filter((e) => !(e.host ?? '').startsWith(`${cell}-`));
      inCell.check(foreign.length === 0, () => `${id} in ${cell}: ${evs.map((e) => e.host).join(',')}`);
      if (s?.status === 'ACTIVE') {
        active++;
        continue;
      }
      errors++;
      why.check(
        s?.status === 'ERROR' && (s.fault?.message ?? '').includes(MAX_RETRIES),
        () => `${id}: ${s?.status} ${s?.fault?.message ?? ''}`,
      );
      exhausted.check(
        evs.length >= 2 && evs.every((e) => e.result !== 'Success'),
        () => `${id}: ${evs.map((e) => `${e.host}:${e.result}`).join(',')}`,
      );
    }
    for (const t of [inCell, why, exhausted]) t.report(ctx);
    ctx.note('retried', retried);
    ctx.log(`${active} ACTIVE, ${errors} ERROR (max retries), ${retried} rescheduled at least once`);
    ctx.expect(retried > 0, `some builds were rescheduled (${retried}): the fault injection took effect`);
  },
};
