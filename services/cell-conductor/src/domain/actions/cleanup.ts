/**
 * What is left to clean after a move: an evacuation's source copy once the source is heard from
 * again (destroy_evacuated, then the migration's source allocation released, migration
 * `completed`), and everything of an instance deleted during a move (both consumers released, the
 * migration ended, a guest on either host terminated).
 */
import { MIGRATION_FINAL, STEP } from './steps';
import type { StepCast } from './step-cast';
import type { ActionInstance, MigrationView, StepReport } from './types';

/** The request id of an evacuation's source cleanup (no user request: the source came back). Pure. */
export function evacuationCleanupRequestId(migrationUuid: string): string {
  return `req-evacuation-cleanup-${migrationUuid}`;
}

/**
 * destroy_evacuated for an evacuation `done` whose source host is heard from again. Not when the
 * instance is gone (the deleted-instance sweep ends that migration) or lives on the source again
 * (its guest there is the instance's own). Pure.
 */
export function evacuationCleanupCast(m: MigrationView, inst: ActionInstance | undefined): StepCast | undefined {
  if (inst === undefined || m.status !== 'done' || m.sourceCompute === null || inst.host === m.sourceCompute) return undefined;
  return {
    instanceUuid: inst.uuid,
    host: m.sourceCompute,
    request: {
      instance: inst.wire,
      step: STEP.destroyEvacuated,
      migrationUuid: m.uuid,
      attempt: 1,
      requestId: evacuationCleanupRequestId(m.uuid),
      flavor: inst.flavor,
      imageRef: inst.imageRef ?? '',
      peerHost: m.destCompute ?? '',
      blockMigration: '',
    },
  };
}

/**
 * A destroy_evacuated result: its success on the evacuation's source ends the evacuation (the
 * migration's allocation released, `completed`); anything else waits for the next time the source is
 * heard from (the cast is repeated then). Pure.
 */
export function judgeEvacuationCleanup(m: MigrationView | undefined, r: StepReport): 'complete' | 'ignore' {
  return r.failure === undefined && m !== undefined && m.status === 'done' && m.sourceCompute === r.host ? 'complete' : 'ignore';
}

/** What to undo for an instance that is gone, from one of its migrations (and the host a report came from). */
export interface OrphanCleanup {
  /** Placement consumers to release: the instance's (idempotent, it is deleted) and the migration's. */
  readonly release: readonly string[];
  /** The migration, when it was not over: ended as `error`. */
  readonly endMigration: string | undefined;
  /** Hosts where a guest of the instance may run. */
  readonly terminate: readonly string[];
}

/** The cleanup of a deleted instance's move (`m` undefined: only the reporting host's guest). Pure. */
export function orphanCleanup(instanceUuid: string, m: MigrationView | undefined, reportHost: string | undefined): OrphanCleanup {
  const hosts = new Set<string>();
  if (reportHost !== undefined && reportHost !== '') hosts.add(reportHost);
  if (m !== undefined) for (const h of [m.sourceCompute, m.destCompute]) if (h !== null && h !== '') hosts.add(h);
  return {
    release: m === undefined ? [instanceUuid] : [instanceUuid, m.uuid],
    endMigration: m !== undefined && !MIGRATION_FINAL.has(m.status) ? m.uuid : undefined,
    terminate: [...hosts].sort(),
  };
}
