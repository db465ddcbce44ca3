import { getRequestSpec, listBuildRequests, listInstanceMappings, type BuildRequest } from '@cellsched/api-db';
import { withSavedTrace } from '@cellsched/bus';
import type { ScheduleAndBuildInstancesRequest } from '@cellsched/wire';
import type { ApiDeps } from './http/kit';

/** Options of the sweeper. */
export interface SweeperOptions {
  /** A build request older than this with no cell is presumed un-cast (its cast was lost). */
  readonly minAgeMs: number;
  /** Between two re-casts of the same request. */
  readonly recastEveryMs: number;
}

/** Groups build requests by reservation: one multi-create is re-cast as one request. Pure. */
export function groupByReservation(brs: readonly BuildRequest[]): BuildRequest[][] {
  const groups = new Map<string, BuildRequest[]>();
  for (const br of brs) {
    const key = br.instance.reservationId === '' ? br.instanceUuid : br.instance.reservationId;
    groups.set(key, [...(groups.get(key) ?? []), br]);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.instance.launchIndex - b.instance.launchIndex));
}

/**
 * Makes "nothing is lost after the commit" hold even if this process died between the
 * commit and the cast's confirm: every sweep re-casts `schedule_and_build_instances` for
 * build requests older than `minAgeMs` (still without a cell, since a BuildRequest is
 * deleted when its instance gets a cell), and `delete_instance` for mappings queued for
 * delete that still have a cell. A re-cast is exactly a redelivery for the super-conductor,
 * whose handlers are idempotent, so a false positive (a cast merely waiting in a long
 * queue) costs a duplicate, never a double build.
 */
export class BuildRequestSweeper {
  private readonly lastCast = new Map<string, number>();
  /** When a queued delete was first seen (it gets `minAgeMs` to be applied before a re-cast). */
  private readonly deleteSeen = new Map<string, number>();

  constructor(
    private readonly deps: ApiDeps,
    private readonly opts: SweeperOptions,
  ) {}

  /** One sweep; returns the instance uuids it re-cast. Safe to run concurrently on several API processes. */
  async sweep(now = Date.now()): Promise<string[]> {
    const recast: string[] = [];
    const due = (uuid: string): boolean => now - (this.lastCast.get(uuid) ?? 0) >= this.opts.recastEveryMs;
    const stale = (await listBuildRequests(this.deps.apiDb)).filter(
      (br) => now - br.createdAt.getTime() >= this.opts.minAgeMs && due(br.instanceUuid),
    );
    for (const group of groupByReservation(stale)) {
      const cast = await this.castFor(group);
      if (cast === undefined) continue;
      // the re-cast (and so the build) continues the create's trace, saved with its build request
      await withSavedTrace('build request re-cast', group[0]?.traceParent, () =>
        this.deps.conductor.scheduleAndBuildInstances(cast, { timeoutMs: this.deps.castTimeoutMs }),
      );
      for (const br of group) {
        this.lastCast.set(br.instanceUuid, now);
        recast.push(br.instanceUuid);
      }
    }
    recast.push(...(await this.sweepDeletes(now, due)));
    return recast;
  }

  private async castFor(group: readonly BuildRequest[]): Promise<ScheduleAndBuildInstancesRequest | undefined> {
    const first = group[0];
    if (first === undefined) return undefined;
    const spec = await getRequestSpec(this.deps.apiDb, first.instanceUuid);
    if (spec === undefined) return undefined;
    const buildRequests = group.map((br) => ({
      instanceUuid: br.instanceUuid,
      displayName: br.instance.displayName,
      launchIndex: br.instance.launchIndex,
      // NOTE: a re-cast is read from the API DB by the super-conductor (a delivery may have placed it already)
      instance: undefined,
    }));
    return { requestSpec: { ...spec, numInstances: group.length }, buildRequests, requestId: spec.requestId, recast: true };
  }

  private async sweepDeletes(now: number, due: (uuid: string) => boolean): Promise<string[]> {
    const mappings = await listInstanceMappings(this.deps.apiDb, { includeQueuedForDelete: true });
    const queued = mappings.filter((m) => {
      if (!m.queuedForDelete || m.cell === undefined) return false;
      const seen = this.deleteSeen.get(m.instanceUuid) ?? now;
      this.deleteSeen.set(m.instanceUuid, seen);
      return now - seen >= this.opts.minAgeMs && due(m.instanceUuid);
    });
    for (const m of queued) {
      await this.deps.conductor.deleteInstance(
        {
          instanceUuid: m.instanceUuid,
          cellUuid: m.cell?.uuid ?? '',
          requestId: `req-sweep-${m.instanceUuid}`,
          userId: m.userId ?? '',
          projectId: m.projectId,
        },
        { timeoutMs: this.deps.castTimeoutMs },
      );
      this.lastCast.set(m.instanceUuid, now);
    }
    return queued.map((m) => m.instanceUuid);
  }
}
