/**
 * The action state machines over the ports (issue 13): an action taken (instance_action), a step's
 * result (instance_step_result), a refused step cast. Each flow takes the snapshot under the row
 * lock, asks the pure decisions (actions/start.ts, actions/advance.ts) what to do, has the ports do
 * it (placement while the lock is held, casts after the commit), and is rerunnable as a whole.
 */
import type { Selection } from '@cellsched/wire';
import type { ActionPorts, ActionTransaction, BuildLog, ClaimConsumer, MigrationView } from '../ports';
import { afterAlternates, judgeStepReport } from './actions/advance';
import { judgeEvacuationCleanup, orphanCleanup } from './actions/cleanup';
import { judgeActionRequest } from './actions/start';
import { refusedStepReport, stepCastFor, type StepCast } from './actions/step-cast';
import { ACTION, STEP, stepKey } from './actions/steps';
import type { AlternatesNeeded } from './actions/transitions';
import type { ActionRequest, ActionSnapshot, PlacementOp, StepReport, Transition } from './actions/types';
import { chooseAlternate, type AlternateClaim } from './reschedule';

/** A terminate of every guest of the instance on a host (build attempts and moves alike). */
export const TERMINATE_ALL_ATTEMPTS = 2_147_483_647;

/** What a decision leaves to do after its commit. */
export interface AfterCommit {
  readonly steps: readonly StepCast[];
  readonly terminate: readonly { readonly instanceUuid: string; readonly host: string; readonly reason: string }[];
}

const NOTHING: AfterCommit = { steps: [], terminate: [] };

/**
 * Who the decision is about, beyond the snapshot: the action and request it runs under (for an
 * instance_action, the request's even while another action holds the instance; for a step, the
 * task's), its migration, and what cast its current step.
 */
interface DecisionMeta {
  readonly requestId: string;
  readonly action: string;
  readonly migrationUuid: string;
  readonly enteredBy: string;
  readonly traceParent: string | null;
}

async function runPlacement(ports: ActionPorts, op: PlacementOp, instanceUuid: string, migrationUuid: string): Promise<void> {
  if (op.op === 'release_instance') await ports.placement.release(instanceUuid);
  else if (op.op === 'release_migration') {
    if (migrationUuid !== '') await ports.placement.release(migrationUuid);
  } else if (migrationUuid !== '') await ports.placement.revertMove(instanceUuid, migrationUuid);
}

/** Carries a transition out inside the locked transaction; returns what to cast after the commit. */
async function apply(
  ports: ActionPorts,
  tx: ActionTransaction,
  snap: ActionSnapshot,
  t: Transition,
  meta: DecisionMeta,
): Promise<AfterCommit> {
  const uuid = snap.instance.uuid;
  const { migrationUuid, action } = meta;
  for (const op of t.placement ?? []) await runPlacement(ports, op, uuid, migrationUuid);
  const instance =
    t.instance !== undefined && Object.keys(t.instance).length > 0 ? await tx.updateInstance(uuid, t.instance) : snap.instance;
  const migration =
    t.migration !== undefined && migrationUuid !== '' ? await tx.updateMigration(migrationUuid, t.migration) : snap.migration;
  if (t.fault !== undefined) await tx.addFault(uuid, t.fault);
  for (const e of t.events ?? []) await tx.recordEvent(instance, meta.requestId, action, e);
  const terminate = (t.terminate ?? []).map((host) => ({ instanceUuid: uuid, host, reason: `stray guest of ${action}` }));
  const deadlineAt = new Date(ports.clock.now().getTime() + ports.stepTimeoutMs);
  const task = t.task;
  if (task.kind === 'end' || task.kind === 'refused') {
    if (task.kind === 'end') await tx.endTask(uuid, meta.requestId);
    await tx.finishAction(uuid, meta.requestId);
    return { steps: [], terminate };
  }
  if (task.kind === 'start') {
    await tx.startTask(uuid, {
      requestId: meta.requestId,
      action,
      next: task.next,
      deadlineAt,
      migrationUuid: task.migrationUuid,
      requestSpec: task.requestSpec,
      params: task.params,
      priorVmState: task.priorVmState,
      traceParent: meta.traceParent,
    });
    const started = {
      step: task.next.step,
      stepHost: task.next.host,
      attempt: task.next.attempt,
      requestId: meta.requestId,
      migrationUuid: task.migrationUuid,
      params: task.params,
    };
    return { steps: [stepCastFor(instance, started, migration)], terminate };
  }
  const from = snap.task;
  const moved = from === undefined ? undefined : await tx.advanceTask(uuid, from, { ...task.next, deadlineAt, enteredBy: meta.enteredBy });
  // NOTE: cannot happen under the row lock (the snapshot was judged at that step); thrown so the transaction rolls back whole
  if (moved === undefined) throw new Error(`task of instance ${uuid} was not at step ${from?.step ?? '-'} any more`);
  return { steps: [stepCastFor(instance, moved, migration)], terminate };
}

async function claimAlternate(
  ports: ActionPorts,
  needed: AlternatesNeeded,
  consumer: ClaimConsumer,
  s: Selection,
  migrationUuid: string,
): Promise<AlternateClaim> {
  const o =
    needed.claim === 'move'
      ? await ports.placement.claimMove(consumer, s, migrationUuid)
      : await ports.placement.claimSelection(consumer, s);
  return o.kind === 'claimed' ? { kind: 'claimed' } : { kind: 'skipped', reason: o.message };
}

/** Casts what a decision left to cast; a step the broker refuses is that step's failure (decided anew, then cast). */
export async function castAfterCommit(ports: ActionPorts, log: BuildLog, after: AfterCommit): Promise<void> {
  for (const t of after.terminate) {
    const r = await ports.compute.terminateInstance(t.host, {
      instanceUuid: t.instanceUuid,
      attempt: TERMINATE_ALL_ATTEMPTS,
      reason: t.reason,
    });
    log.info({ instance_uuid: t.instanceUuid, host: t.host, routed: r === 'sent' }, 'stray guest terminated');
  }
  for (const s of after.steps) {
    if ((await ports.compute.instanceStep(s.host, s.request)) === 'sent') continue;
    log.warn(
      { instance_uuid: s.instanceUuid, host: s.host, step: s.request.step },
      'step cast refused by the broker: the step failed there',
    );
    await onStepReport(ports, log, refusedStepReport(s));
  }
}

/**
 * `instance_action`: take the action (its first step cast after the commit), or refuse it with the
 * instance's state put back. Idempotent per (instance, request id).
 */
export async function onInstanceAction(ports: ActionPorts, log: BuildLog, given: ActionRequest, traceParent: string | null): Promise<void> {
  const req = await withResizeMigration(ports, given);
  const meta: DecisionMeta = {
    requestId: req.requestId,
    action: req.action,
    migrationUuid: req.migrationUuid,
    enteredBy: 'action',
    traceParent,
  };
  const after = await ports.actions.withLockedAction(req.instanceUuid, req, async (locked, tx, named) => {
    // NOTE: judged with the request's own migration: another action holding the instance has its own
    const snap = locked === undefined ? undefined : { ...locked, migration: named };
    const v = judgeActionRequest(snap, req);
    if (locked === undefined || snap === undefined || v.kind === 'ignore')
      return { verdict: v.kind === 'ignore' ? v.reason : 'gone', after: NOTHING };
    if (v.kind === 'recast') return { verdict: 'recast', after: recast(locked) };
    return {
      verdict: v.refused === undefined ? 'started' : `refused: ${v.refused}`,
      after: await apply(ports, tx, snap, v.transition, meta),
    };
  });
  log.info({ instance_uuid: req.instanceUuid, action: req.action, request_id: req.requestId, verdict: after.verdict }, 'instance action');
  await castAfterCommit(ports, log, after.after);
}

/**
 * confirmResize and revertResize name no migration (the api and the super-conductor forward them as
 * they are): theirs is the instance's resize waiting in VERIFY_RESIZE, as Nova finds it.
 */
async function withResizeMigration(ports: ActionPorts, req: ActionRequest): Promise<ActionRequest> {
  if (req.migrationUuid !== '' || (req.action !== ACTION.confirmResize && req.action !== ACTION.revertResize)) return req;
  return { ...req, migrationUuid: (await ports.actions.resizeMigrationOf(req.instanceUuid)) ?? '' };
}

function recast(snap: ActionSnapshot): AfterCommit {
  return snap.task === undefined ? NOTHING : { steps: [stepCastFor(snap.instance, snap.task, snap.migration)], terminate: [] };
}

/** The cleanup of an instance deleted during its move, from one report (and its migration, if any). */
async function cleanOrphan(ports: ActionPorts, tx: ActionTransaction, r: StepReport, m: MigrationView | undefined): Promise<AfterCommit> {
  const c = orphanCleanup(r.instanceUuid, m?.instanceUuid === r.instanceUuid ? m : undefined, r.host);
  await ports.placement.release(c.release[0] ?? r.instanceUuid);
  for (const consumer of c.release.slice(1)) await ports.placement.release(consumer);
  if (c.endMigration !== undefined) await tx.endMigration(c.endMigration);
  return {
    steps: [],
    terminate: c.terminate.map((host) => ({ instanceUuid: r.instanceUuid, host, reason: 'instance deleted during its action' })),
  };
}

/**
 * `instance_step_result` (and the reports standing in for one): move the action on by one step under
 * the row lock, claiming alternates when a destination failed, then cast what was decided.
 */
export async function onStepReport(ports: ActionPorts, log: BuildLog, r: StepReport): Promise<void> {
  if (r.step === STEP.destroyEvacuated) return onEvacuationCleanupResult(ports, log, r);
  const out = await ports.actions.withLockedAction(r.instanceUuid, r, async (snap, tx, migration) => {
    const v = judgeStepReport(snap, r);
    if (v.kind === 'orphan' || snap === undefined) return { verdict: 'orphan', after: await cleanOrphan(ports, tx, r, migration) };
    const meta: DecisionMeta = {
      requestId: r.requestId,
      action: snap.task?.action ?? '',
      migrationUuid: snap.task?.migrationUuid ?? '',
      enteredBy: stepKey(r.step, r.host, r.attempt, r.failure !== undefined),
      traceParent: null,
    };
    if (v.kind === 'ignore')
      return {
        verdict: v.reason,
        after: {
          steps: [],
          terminate: v.terminate.map((host) => ({ instanceUuid: r.instanceUuid, host, reason: `stale ${r.step} result` })),
        },
      };
    if (v.kind === 'recast') return { verdict: 'recast', after: recast(snap) };
    if (v.kind === 'apply') return { verdict: 'applied', after: await apply(ports, tx, snap, v.transition, meta) };
    const { instance: i, task } = v.context;
    const consumer = { uuid: i.uuid, projectId: i.projectId, userId: i.userId, group: task.requestSpec?.instanceGroup };
    const decision = await chooseAlternate(v.needed.alternates, (s) =>
      claimAlternate(ports, v.needed, consumer, s, task.migrationUuid ?? ''),
    );
    const verdict = decision.kind === 'rescheduled' ? `retried on ${decision.selection.serviceHost}` : 'alternates exhausted';
    return { verdict, after: await apply(ports, tx, snap, afterAlternates(v.context, v.needed, decision), meta) };
  });
  const fields = {
    instance_uuid: r.instanceUuid,
    step: r.step,
    host: r.host,
    attempt: r.attempt,
    origin: r.origin,
    failed: r.failure !== undefined,
    verdict: out.verdict,
  };
  if (r.failure === undefined) log.info(fields, 'instance step result');
  else log.warn({ ...fields, failure: r.failure.message }, 'instance step failed');
  await castAfterCommit(ports, log, out.after);
}

/** destroy_evacuated's result: the evacuation's source copy is gone, so its allocation goes and the migration is `completed`. */
async function onEvacuationCleanupResult(ports: ActionPorts, log: BuildLog, r: StepReport): Promise<void> {
  const m = r.migrationUuid === '' ? undefined : await ports.actions.getMigration(r.migrationUuid);
  const verdict = judgeEvacuationCleanup(m, r);
  if (verdict === 'complete' && m !== undefined) {
    // NOTE: release first: a crash between leaves `done`, and the next heartbeat of the source repeats both
    await ports.placement.release(m.uuid);
    await ports.actions.setMigrationStatus(m.uuid, 'completed', ['done']);
  }
  log.info(
    { instance_uuid: r.instanceUuid, migration_uuid: r.migrationUuid, host: r.host, failed: r.failure !== undefined, verdict },
    'evacuated instance destroyed on its source',
  );
}
