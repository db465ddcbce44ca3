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
    let afterActive = 0;
    for (let r = 0; r < rounds; r++) {
      const ids = await ctx.boot(ctx.rng.int(8, 20), { burst: 20 });
      // each one: kept (30%), deleted at once (25%), after a random delay spanning the pipeline (25%), or once ACTIVE (20%)
      await Promise.all(
        ids.map(async (id) => {
          const r = ctx.rng.next();
          if (r < 0.3) return;
          if (r < 0.55) await ctx.wait(ctx.rng.int(0, 50));
          else if (r < 0.8) await ctx.wait(ctx.rng.int(0, 10 * latency + 1000));
          else {
            await ctx.waitFor(
              `${id} ACTIVE or ERROR`,
              async () => {
                const g = await ctx.stack.api<{ server?: { status: string } }>('GET', `/servers/${id}`);
                return ['ACTIVE', 'ERROR'].includes(g.body?.server?.status ?? '') ? true : undefined;
              },
              60_000,
            );
            afterActive++;
          }
          const st = await ctx.deleteServer(id);
          deletes++;
          statuses[String(st)] = (statuses[String(st)] ?? 0) + 1;
        }),
      );
    }
    const loadIds = await ctx.load.stop();
    ctx.note('deleteStatuses', statuses);
    ctx.note('loadCreated', loadIds.length);
    ctx.note('deletedAfterSettled', afterActive);
    ctx.log(
      `${deletes} racing deletes (${afterActive} once settled; ${JSON.stringify(statuses)}), background load created ${loadIds.length}`,
    );
    ctx.expect(
      Object.keys(statuses).every((s) => s === '204'),
      `every racing delete answered 204 (${JSON.stringify(statuses)})`,
    );
  },
};
