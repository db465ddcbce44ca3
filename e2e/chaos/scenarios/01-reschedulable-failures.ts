import type { Scenario } from '../scenario';

/**
 * Builds failing reschedulably at 10–50% (the computes' fault injection): every server ends
 * ACTIVE, or ERROR with a max-retries fault; retries stay in the first choice's cell.
 */
export const reschedulableFailures: Scenario = {
  name: 'reschedulable-failures',
  summary: 'builds fail reschedulably at 10-50% per cell: all ACTIVE or ERROR (max retries), allocations exact',
  ci: true,
  async run(ctx) {
    for (const cell of ctx.stack.topology().cells) {
      const rate = Math.round((0.1 + ctx.rng.next() * 0.4) * 100) / 100;
      await ctx.faults.set(cell.name, { failRate: rate });
      ctx.log(`${cell.name}: ${Math.round(rate * 100)}% of builds fail reschedulably`);
      ctx.note(`failRate.${cell.name}`, rate);
    }
    const ids = await ctx.boot(ctx.scale(120), { burst: 10 });
    ctx.expect(ids.length === ctx.scale(120), `every create accepted (${ids.length}/${ctx.scale(120)})`);
    ctx.log(`${ids.length} builds accepted`);
  },
};
