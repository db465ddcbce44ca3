import { clearServerTaskIntent, getInstanceMappings, listStaleServerTaskIntents, type ServerTaskIntent } from '@cellsched/api-db';
import { withSavedTrace } from '@cellsched/bus';
import { ServerActionRequest } from '@cellsched/wire';
import type { ApiDeps } from './http/kit';

/** Options of {@link ServerActionSweeper}. */
export interface ServerActionSweeperOptions {
  /** An intent older than this is presumed un-cast (its cast was lost) and is cast again. */
  readonly minAgeMs: number;
  /** Between two re-casts of the same intent. */
  readonly recastEveryMs: number;
  /**
   * An intent still there after this long is given up: its action was neither applied nor
   * refused in time, and the server must not stay locked in a task_state for good. The
   * super-conductor is told (the request cast once more with `expired_after_s`: it records the
   * action as failed, or fails it if it stopped before scheduling), then the intent is cleared.
   */
  readonly expireAfterMs: number;
}

/** What one sweep did, by instance uuid (`expired`: given up, the super-conductor told, the intent cleared). */
export interface ActionSweep {
  readonly recast: string[];
  readonly cleared: string[];
  readonly expired: string[];
}

/** Intents read per sweep (the oldest first). */
const BATCH = 500;

/**
 * Makes "nothing is lost after the intent is recorded" hold even if the `server_action` cast
 * was lost (broker down, this process died before the confirm): every sweep re-casts the
 * intents older than `minAgeMs` exactly as they were recorded (same request id: for the
 * super-conductor a re-cast is a redelivery, idempotent per request id), in the trace of the
 * request that made them. It also gives every intent a way out: one whose server is gone is
 * cleared at once; one older than `expireAfterMs` is given up: cast once more marked expired (the
 * super-conductor then records the action as failed with a fault saying it was never taken up,
 * so the user sees it in the server's actions, and puts back an action stopped before its
 * scheduling), then cleared with a warning, which returns the server view to what its cell holds.
 * An expiry whose cast fails is tried again at the next sweep. Safe to run on several API
 * processes at once (re-casts are idempotent, clears are per request id).
 */
export class ServerActionSweeper {
  private readonly lastCast = new Map<string, number>();

  constructor(
    private readonly deps: ApiDeps,
    private readonly opts: ServerActionSweeperOptions,
  ) {}

  /** One sweep at `now` (ms). */
  async sweep(now = Date.now()): Promise<ActionSweep> {
    const stale = (await listStaleServerTaskIntents(this.deps.apiDb, 0, BATCH)).filter(
      (i) => now - i.createdAt.getTime() >= this.opts.minAgeMs,
    );
    const live = new Set(
      (
        await getInstanceMappings(
          this.deps.apiDb,
          stale.map((i) => i.instanceUuid),
        )
      ).map((m) => m.instanceUuid),
    );
    const out: ActionSweep = { recast: [], cleared: [], expired: [] };
    for (const intent of stale) {
      const key = `${intent.instanceUuid}/${intent.requestId}`;
      if (!live.has(intent.instanceUuid)) {
        if (await clearServerTaskIntent(this.deps.apiDb, intent.instanceUuid, intent.requestId)) out.cleared.push(intent.instanceUuid);
        this.lastCast.delete(key);
        continue;
      }
      if (now - intent.createdAt.getTime() >= this.opts.expireAfterMs) {
        if (await this.expire(intent)) out.expired.push(intent.instanceUuid);
        this.lastCast.delete(key);
        continue;
      }
      if (now - (this.lastCast.get(key) ?? 0) < this.opts.recastEveryMs) continue;
      const req = ServerActionRequest.fromJSON(intent.request);
      await withSavedTrace('server action re-cast', intent.traceParent ?? undefined, () =>
        this.deps.conductor.serverAction(req, { timeoutMs: this.deps.castTimeoutMs }),
      );
      this.lastCast.set(key, now);
      out.recast.push(intent.instanceUuid);
    }
    return out;
  }

  /** Tells the super-conductor the request is given up, then clears the intent; false (nothing cleared) if the cast failed. */
  private async expire(intent: ServerTaskIntent): Promise<boolean> {
    const fields = {
      instance_uuid: intent.instanceUuid,
      request_id: intent.requestId,
      action: intent.action,
      created_at: intent.createdAt,
    };
    const req = { ...ServerActionRequest.fromJSON(intent.request), expiredAfterS: Math.max(1, Math.round(this.opts.expireAfterMs / 1000)) };
    try {
      await withSavedTrace('server action given up', intent.traceParent ?? undefined, () =>
        this.deps.conductor.serverAction(req, { timeoutMs: this.deps.castTimeoutMs }),
      );
    } catch (err) {
      this.deps.log.warn({ ...fields, err }, 'server action intent expired; telling the super-conductor failed, kept for the next sweep');
      return false;
    }
    const cleared = await clearServerTaskIntent(this.deps.apiDb, intent.instanceUuid, intent.requestId);
    if (cleared)
      this.deps.log.warn({ ...fields, expired_after_s: req.expiredAfterS }, 'server action intent expired unapplied; given up and cleared');
    return cleared;
  }
}
