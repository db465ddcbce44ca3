import { buildEvents, MAX_RETRIES, serverViews, Tally } from '../checks';
import type { Scenario } from '../scenario';

/**
 * Builds failing non-reschedulably (the compute aborts: Nova's BuildAbortException): the server
 * goes to ERROR at once with the compute's "aborted" fault, on that one host — no reschedule, no
 * allocation left — while the others build normally. A share of reschedulable failures is mixed
 * in, so an abort after a reschedule is covered too.
 */
export const nonReschedulableFailures: Scenario = {
  name: 'non-reschedulable-failures',
  summary: 'builds abort non-reschedulably (20-40%): ERROR at once with the abort fault, never retried, no allocation left',
  ci: true,
  async run(ctx) {
    for (const cell of ctx.stack.topology().cells) {
      const abort = Math.round((0.2 + ctx.rng.next() * 0.2) * 100) / 100;
      const fail = Math.round(ctx.rng.next() * 0.15 * 100) / 100;
      await ctx.faults.set(cell.name, { nonReschedulableRate: abort, failRate: fail });
      ctx.log(`${cell.name}: ${Math.round(abort * 100)}% of builds abort, ${Math.round(fail * 100)}% fail reschedulably`);
      ctx.note(`abortRate.${cell.name}`, abort);
      ctx.note(`failRate.${cell.name}`, fail);
    }
    const n = ctx.scale(100);
    const ids = await ctx.boot(n, { burst: ctx.rng.int(5, 20) });
    ctx.expect(ids.length === n, `every create accepted (${ids.length}/${n})`);
    const left = await ctx.quiesce(90_000);
    ctx.expect(left.length === 0, `all settled (${left.length} still building)`);

    const views = await serverViews(ctx, ids);
    const events = await buildEvents(ctx);
    const byInstance = new Map<string, typeof events>();
    for (const e of events) byInstance.set(e.instance_uuid, [...(byInstance.get(e.instance_uuid) ?? []), e]);
    let aborted = 0;
    let maxRetries = 0;
    let active = 0;
    const why = new Tally('every ERROR says why: the abort, or max retries');
    const noRetry = new Tally('an aborted build is never retried on another host (its last attempt is the abort)');
    for (const id of ids) {
      const s = views.get(id);
      if (s?.status === 'ACTIVE') {
        active++;
        continue;
      }
      const msg = s?.fault?.message ?? '';
      const evs = byInstance.get(id) ?? [];
      if (msg.includes(MAX_RETRIES)) {
        maxRetries++;
        continue;
      }
      aborted++;
      why.check(s?.status === 'ERROR' && /aborted/i.test(msg), () => `${id}: ${s?.status} "${msg}"`);
      // every attempt before the abort failed reschedulably; the abort is the last and no host after it
      noRetry.check(
        evs.filter((e) => e.result === 'Success').length === 0,
        () => `${id}: ${evs.map((e) => `${e.host}:${e.result}`).join(',')}`,
      );
    }
    why.report(ctx);
    noRetry.report(ctx);
    ctx.note('aborted', aborted);
    ctx.log(`${active} ACTIVE, ${aborted} ERROR (aborted), ${maxRetries} ERROR (max retries)`);
    ctx.expect(aborted > 0, `some builds aborted (${aborted}): the fault injection took effect`);
  },
};
