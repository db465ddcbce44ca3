import type { Scenario } from '../scenario';

/**
 * Deletes racing builds: servers are deleted at random moments from the 202 on — while the
 * build request waits, while it is scheduled, while the compute builds (and reschedules), just
 * after it went ACTIVE — plus a background load that deletes half of what it creates. Every
 * delete must leave nothing behind (no instance, mapping, build request, allocation or guest:
 * the invariants), every other server settles.
 */
export const deletesRacingBuilds: Scenario = {
  name: 'deletes-racing-builds',
  summary: 'deletes at random moments of the build (with reschedules): nothing left behind, the rest settle',
  ci: true,
  async run(ctx) {
    await ctx.faults.set('all', { failRate: 0.2 });
    const latency = ctx.stack.shape.buildLatencyMs;
    ctx.load.start({ rate: ctx.profile.name === 'ci' ? 3 : 8, deleteShare: 0.5 });
    const rounds = ctx.scale(6);
    const statuses: Record<string, number> = {};
    let deletes = 0;
    for (let r = 0; r < rounds; r++) {
      const ids = await ctx.boot(ctx.rng.int(8, 20), { burst: 20 });
      // each one deleted (70%) after a random delay spanning the whole build: 0 .. 4 build latencies
      await Promise.all(ids.map(async (id) => {
        if (ctx.rng.next() >= 0.7) return;
        await ctx.wait(ctx.rng.int(0, 4 * latency + 200));
        const st = await ctx.deleteServer(id);
        deletes++;
        statuses[String(st)] = (statuses[String(st)] ?? 0) + 1;
      }));
    }
    const loadIds = await ctx.load.stop();
    ctx.note('deleteStatuses', statuses);
    ctx.note('loadCreated', loadIds.length);
    ctx.log(`${deletes} racing deletes (${JSON.stringify(statuses)}), background load created ${loadIds.length}`);
    ctx.expect(Object.keys(statuses).every((s) => s === '204'), `every racing delete answered 204 (${JSON.stringify(statuses)})`);
  },
};
