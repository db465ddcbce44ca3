import { cellOfInstances, NO_VALID_HOST, serverViews, Tally } from '../checks';
import type { Scenario } from '../scenario';

interface Inventory {
  total: number;
  reserved: number;
  allocation_ratio: number;
}
const FLAVOR = { id: '5', resources: { VCPU: 8, MEMORY_MB: 16384, DISK_GB: 160 } }; // m1.xlarge

/**
 * Two to four scheduler replicas (the profile's; the super-conductor spreads requests over
 * them round-robin) race to fill an empty cloud to 100%: one big burst of 25% more servers than
 * fit. Exactly the capacity ends ACTIVE, every other one is ERROR in cell 0 with NoValidHost,
 * every provider is exactly full for the flavor, none over.
 */
export const schedulersFillCloud: Scenario = {
  name: 'schedulers-fill-cloud',
  summary: 'schedulers race to fill the cloud to 100%: ACTIVE = capacity, the rest NoValidHost in cell0, placement exactly full',
  ci: true,
  baselineFaults: false,
  async run(ctx) {
    await ctx.faults.clear(); // exact fill: no build may fail (a reschedule into a full cloud would end in max retries)
    const rps = await ctx.stack.placement<{ resource_providers: { uuid: string; name: string }[] }>('GET', '/resource_providers');
    let capacity = 0;
    const fitOf = new Map<string, number>();
    for (const rp of rps.body.resource_providers) {
      const inv = await ctx.stack.placement<{ inventories: Record<string, Inventory> }>(
        'GET',
        `/resource_providers/${rp.uuid}/inventories`,
      );
      const u = await ctx.stack.placement<{ usages: Record<string, number> }>('GET', `/resource_providers/${rp.uuid}/usages`);
      const fit = Math.min(
        ...Object.entries(FLAVOR.resources).map(([rc, need]) => {
          const i = inv.body.inventories[rc];
          return i === undefined ? 0 : Math.floor(((i.total - i.reserved) * i.allocation_ratio - (u.body.usages[rc] ?? 0)) / need);
        }),
      );
      fitOf.set(rp.name, fit);
      capacity += fit;
    }
    const n = Math.ceil(capacity * 1.25) + 1;
    ctx.note('schedulers', ctx.stack.servicesOf('scheduler').length);
    ctx.note('capacity', capacity);
    ctx.log(
      `${rps.body.resource_providers.length} providers fit ${capacity} m1.xlarge; ${ctx.stack.servicesOf('scheduler').length} schedulers; booting ${n} in one burst`,
    );
    const ids = await ctx.boot(n, { burst: n, flavor: FLAVOR.id });
    ctx.expect(ids.length === n, `every create accepted (${ids.length}/${n})`);
    const left = await ctx.quiesce(120_000);
    ctx.expect(left.length === 0, `all settled (${left.length} still building)`);

    const views = await serverViews(ctx, ids);
    const cells = await cellOfInstances(ctx);
    let active = 0;
    const nvh = new Tally('every server not ACTIVE is ERROR in cell0 with NoValidHost');
    for (const id of ids) {
      const s = views.get(id);
      if (s?.status === 'ACTIVE') {
        active++;
        continue;
      }
      nvh.check(
        s?.status === 'ERROR' && cells.get(id) === 'cell0' && (s.fault?.message ?? '').startsWith(NO_VALID_HOST),
        () => `${id}: ${s?.status} in ${cells.get(id)} "${s?.fault?.message ?? ''}"`,
      );
    }
    nvh.report(ctx);
    ctx.log(`${active} ACTIVE of capacity ${capacity}, ${ids.length - active} NoValidHost`);
    ctx.expect(active === capacity, `ACTIVE = capacity (${active} = ${capacity})`);
    const full = new Tally('every provider exactly full for the flavor (no room for one more, none over)');
    for (const rp of rps.body.resource_providers) {
      const inv = await ctx.stack.placement<{ inventories: Record<string, Inventory> }>(
        'GET',
        `/resource_providers/${rp.uuid}/inventories`,
      );
      const u = await ctx.stack.placement<{ usages: Record<string, number> }>('GET', `/resource_providers/${rp.uuid}/usages`);
      const room = Math.min(
        ...Object.entries(FLAVOR.resources).map(([rc, need]) => {
          const i = inv.body.inventories[rc];
          return i === undefined ? 0 : ((i.total - i.reserved) * i.allocation_ratio - (u.body.usages[rc] ?? 0)) / need;
        }),
      );
      full.check(room >= 0 && room < 1, () => `${rp.name}: room for ${room.toFixed(2)} more (usages ${JSON.stringify(u.body.usages)})`);
    }
    full.report(ctx);
  },
};
