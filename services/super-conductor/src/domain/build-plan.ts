import type { Failure } from '@cellsched/wire';

/** Nova's event name of the super-conductor's step, recorded on the instance's `create` action. */
export const EVENT_SCHEDULE = 'conductor_schedule_and_build_instances';

/** Alternates per instance the super-conductor asks the scheduler for (Nova: max_attempts - 1). Pure. */
export function numAlternates(maxAttempts: number): number {
  return Math.max(0, Math.floor(maxAttempts) - 1);
}

/**
 * Whether a `schedule_and_build_instances` cast's instances may already be in a cell database,
 * put there by an earlier delivery or an earlier cast of the same create that stopped before
 * pointing the mapping at the cell: unless this is the create's first cast (a 1.5 sender says so
 * with `recast` false) on its first delivery. Only then is looking in every cell skipped. Pure.
 */
export function mayBeInACell(c: { readonly redelivered: boolean; readonly recast: boolean; readonly rpcVersion: string }): boolean {
  const [major, minor] = c.rpcVersion.split('.').map(Number);
  const knowsRecast = major !== undefined && minor !== undefined && (major > 1 || (major === 1 && minor >= 5));
  return c.redelivered || c.recast || !knowsRecast;
}

/** What one build request's instance mapping says before scheduling. */
export interface MappingState {
  readonly instanceUuid: string;
  /** False when the API's mapping is gone (the server was deleted and cleaned up). */
  readonly exists: boolean;
  readonly cellUuid: string | undefined;
  readonly queuedForDelete: boolean;
}

/** What to do with each instance of one `schedule_and_build_instances` cast. */
export interface BuildPlan {
  /** Instances never placed: ask the scheduler for them (one call for all). */
  readonly toSchedule: readonly string[];
  /** Instances a previous delivery already created in a cell: finish them there (no second scheduling). */
  readonly resume: readonly { readonly instanceUuid: string; readonly cellUuid: string }[];
  /** Instances with nothing to do, and why (logged). */
  readonly skipped: readonly { readonly instanceUuid: string; readonly reason: string }[];
}

/**
 * Splits a (possibly redelivered) cast's instances. `found` maps instances already present
 * in some cell database (a delivery that crashed before updating the mapping) to that cell.
 * An instance whose mapping already names a cell, or that exists in a cell, is never
 * scheduled again: the scheduler is called at most once per instance. Pure.
 */
export function planBuild(mappings: readonly MappingState[], found: ReadonlyMap<string, string>): BuildPlan {
  const toSchedule: string[] = [];
  const resume: { instanceUuid: string; cellUuid: string }[] = [];
  const skipped: { instanceUuid: string; reason: string }[] = [];
  for (const m of mappings) {
    const cellUuid = m.cellUuid ?? found.get(m.instanceUuid);
    if (!m.exists) skipped.push({ instanceUuid: m.instanceUuid, reason: 'no instance mapping (server deleted)' });
    else if (cellUuid !== undefined) resume.push({ instanceUuid: m.instanceUuid, cellUuid });
    else if (m.queuedForDelete) skipped.push({ instanceUuid: m.instanceUuid, reason: 'queued for delete before scheduling' });
    else toSchedule.push(m.instanceUuid);
  }
  return { toSchedule, resume, skipped };
}

/** The fault a NoValidHost leaves on the buried instance: Nova's message plus the per-filter diagnosis. Pure. */
export function noValidHostFault(failure: Failure): { readonly message: string; readonly details: string } {
  const reason = failure.message === '' ? 'There are not enough hosts available.' : failure.message;
  const message = reason.startsWith('No valid host was found') ? reason : `No valid host was found. ${reason}`;
  const lines = failure.diagnosis.map(
    (d) => `${d.filter}: ${d.hostsBefore} -> ${d.hostsAfter} hosts${d.reason === '' ? '' : ` (${d.reason})`}`,
  );
  return { message, details: lines.length === 0 ? `code: ${failure.code}` : `code: ${failure.code}\n${lines.join('\n')}` };
}
