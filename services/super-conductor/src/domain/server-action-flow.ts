/**
 * One `server_action` cast (DESIGN's move flow, step 2) as a flow over the ports: the guarded
 * begin in the cell, the scheduling of a move or unshelve in the instance's cell, the cast to the
 * cell conductor, the intent cleared last. Every step is idempotent and the flow resumes from what
 * the cell holds ({@link resumeStep}), so a redelivered cast never records, schedules or claims a
 * second time; nothing is left in a task_state when the action cannot go on.
 */
import type { RequestSpec, Selection } from '@cellsched/wire';
import type { ActionInstance, ActionState, ConductorLog, ServerActionPorts, ServerActionRecords } from '../ports';
import {
  expiredFault,
  forcedDestination,
  forcedLiveMigrationFault,
  instanceActionRequest,
  moveContext,
  recordedMoveHostList,
  savedSpecAfterSchedule,
  savedSpecOnResizeDecision,
  scheduleFault,
  scheduleSpec,
  unroutableFault,
  type ActionFault,
} from './action-requests';
import { beginOf, resumeStep, type ActionPlan, type ActionStep } from './server-actions';

/** Process-wide settings of the flow. */
export interface ServerActionSettings {
  /** This super-conductor's host: the host of Nova's conductor events. */
  readonly conductorHost: string;
  /** Alternates asked for per move (max_attempts - 1). */
  readonly numAlternates: number;
  /** Nova's allow_resize_to_same_host. */
  readonly allowResizeToSameHost: boolean;
  /** Nova's service_down_time (ms): a forced live migration's host silent longer is down (default 60 s). */
  readonly serviceDownTimeMs?: number;
}

/** Nova's default service_down_time. */
const DEFAULT_SERVICE_DOWN_TIME_MS = 60_000;

/** How a cast ended (`expired`: the api gave it up, and it was recorded as failed). */
export type ServerActionOutcome = 'cast' | 'refused' | 'no_valid_host' | 'unroutable' | 'settled' | 'gone' | 'expired';

/** Where the cast goes once scheduled: the host list and the spec it was scheduled with. */
interface Destination {
  readonly hostList: readonly Selection[];
  readonly spec: RequestSpec | undefined;
}

type Flow = {
  readonly ports: ServerActionPorts;
  readonly log: ConductorLog;
  readonly settings: ServerActionSettings;
  readonly plan: ActionPlan;
};
type Records = Omit<ServerActionRecords, 'exclusive'>;
/** Where the scheduling under the lock left the cast. */
type Scheduled = { readonly step: ActionStep | 'no_valid_host'; readonly state: ActionState; readonly dest?: Destination };

const fields = (plan: ActionPlan): object => ({
  instance_uuid: plan.req.instanceUuid,
  action: plan.req.action,
  migration_uuid: plan.migrationUuid,
});

/** Reads what the cell holds for this request. */
function readState(records: Records, plan: ActionPlan): Promise<ActionState> {
  return records.read(plan.req.instanceUuid, plan.req.requestId, plan.migrationUuid);
}

/**
 * The instance was deleted meanwhile: nothing of it may stay in placement. Its delete released the
 * instance consumer, but a claim of this action may have landed after that, and a move's migration
 * consumer holds the source: both go. Idempotent.
 */
async function gone(f: Flow): Promise<ServerActionOutcome> {
  await f.ports.claims.release([f.plan.req.instanceUuid, ...(f.plan.migrationUuid === undefined ? [] : [f.plan.migrationUuid])]);
  await f.ports.api.clearIntent(f.plan.req.instanceUuid, f.plan.req.requestId);
  f.log.info(fields(f.plan), 'server action: instance gone');
  return 'gone';
}

/** The action's events that end in Error when it fails: its conductor events, or its compute event on the instance's host. */
function errorEvents(f: Flow, i: ActionInstance | undefined): { event: string; host: string | null }[] {
  const b = beginOf(f.plan, f.settings.conductorHost, i?.host ?? null);
  return b.events.length > 0
    ? b.events.map((event) => ({ event, host: f.settings.conductorHost }))
    : [{ event: b.refusedEvent, host: b.refusedEventHost }];
}

/**
 * An action that cannot go on: what it claimed goes back (a move's source to the instance, an
 * unshelve's claim released), then the migration `error`, the task_state back to none (vm_state
 * unchanged unless `vmState`), the fault and the events in Error, in one transaction. Idempotent.
 */
async function failAction(f: Flow, records: Records, i: ActionInstance, fault: ActionFault, vmState?: 'error'): Promise<'failed' | 'gone'> {
  const { plan } = f;
  if (plan.migrationUuid !== undefined) await f.ports.claims.revertMove(plan.req.instanceUuid, plan.migrationUuid);
  else if (plan.def.kind === 'unshelve') await f.ports.claims.release([plan.req.instanceUuid]);
  const migration =
    plan.migrationUuid === undefined || plan.def.migration === undefined
      ? undefined
      : { uuid: plan.migrationUuid, fromStatus: plan.def.migration.status };
  return records.fail({
    instanceUuid: plan.req.instanceUuid,
    requestId: plan.req.requestId,
    taskState: plan.def.taskState,
    vmState,
    migration,
    fault,
    events: errorEvents(f, i),
  });
}

/** Nova's conductor checks of a forced live migration's host (the scheduler never sees it): the fault, or undefined. */
async function forcedHostFault(f: Flow, records: Records, i: ActionInstance): Promise<ActionFault | undefined> {
  const { plan } = f;
  if (!forcedDestination(plan) || plan.req.action !== 'live-migration') return undefined;
  const svc = await records.computeService(plan.req.host);
  return forcedLiveMigrationFault(plan, i, svc, new Date(), f.settings.serviceDownTimeMs ?? DEFAULT_SERVICE_DOWN_TIME_MS);
}

/**
 * Fails the action under the lock (NoValidHost, a refused forced host): the step the cast ends
 * with. An evacuate's instance goes to ERROR, as Nova's conductor sets it (its host is down: it
 * runs nowhere); the other moves leave it as it was.
 */
async function failScheduling(f: Flow, records: Records, i: ActionInstance, state: ActionState, fault: ActionFault): Promise<Scheduled> {
  const failed = await failAction(f, records, i, fault, f.plan.req.action === 'evacuate' ? 'error' : undefined);
  return { step: failed === 'gone' ? 'gone' : 'no_valid_host', state };
}

/** Records the scheduler's choice (a move's migration destination, an unshelve's host list) and saves a resize's spec. */
async function recordChoice(
  f: Flow,
  records: Records,
  i: ActionInstance,
  state: ActionState,
  dest: Destination,
  stored: RequestSpec | undefined,
): Promise<Scheduled> {
  const { plan, ports } = f;
  const chosen = dest.hostList[0];
  if (chosen === undefined) throw new Error(`the scheduler returned no host for ${i.uuid}`);
  const migration =
    plan.migrationUuid === undefined || plan.def.migration === undefined
      ? undefined
      : { uuid: plan.migrationUuid, fromStatus: plan.def.migration.status };
  const recorded = await records.recordDestination({ instanceUuid: i.uuid, hostList: dest.hostList, migration });
  if (recorded === 'gone') return { step: 'gone', state };
  if (recorded === 'stale') {
    // NOTE: under the lock only the cell (an admin's reset, the cell conductor) moves the action on; an unshelve's fresh claim is ours alone.
    if (plan.def.kind === 'unshelve') await ports.claims.release([i.uuid]);
    f.log.error(
      { ...fields(plan), selected_host: chosen.serviceHost },
      'server action: the instance or migration moved on while it was scheduled',
    );
    return { step: 'clear_intent', state };
  }
  const saved = savedSpecAfterSchedule(plan, stored);
  if (saved !== undefined) await ports.api.saveRequestSpec(saved);
  f.log.info({ ...fields(plan), selected_host: chosen.serviceHost, alternates: dest.hostList.length - 1 }, 'server action scheduled');
  return { step: 'cast', state, dest };
}

/**
 * The scheduling of a move or unshelve, under the instance's server-action lock: re-decides from
 * the cell (a duplicate delivery that waited finds the destination recorded), checks a forced
 * live migration's host as Nova's conductor does, asks the scheduler (a forced destination: no
 * alternates), then records the destination, or fails the action.
 */
async function schedule(f: Flow): Promise<Scheduled> {
  const { plan, ports } = f;
  const stored = await ports.api.requestSpec(plan.req.instanceUuid);
  return ports.records.exclusive(plan.req.instanceUuid, async (records) => {
    const state = await readState(records, plan);
    const step = resumeStep(plan, state, true);
    const i = state.instance;
    if (step !== 'schedule' || i === undefined) return { step, state };
    const refused = await forcedHostFault(f, records, i);
    if (refused !== undefined) {
      f.log.warn({ ...fields(plan), host: plan.req.host, reason: refused.message }, 'server action: forced destination refused');
      return failScheduling(f, records, i, state, refused);
    }
    const spec = scheduleSpec(plan, i, stored);
    const alternates = forcedDestination(plan) ? 0 : f.settings.numAlternates;
    const outcome = await ports.selector.selectDestinations(
      spec,
      [i.uuid],
      alternates,
      moveContext(plan, i, f.settings.allowResizeToSameHost),
    );
    if (outcome.kind !== 'selected') {
      f.log.warn({ ...fields(plan), code: outcome.failure.code, diagnosis: outcome.failure.diagnosis }, 'server action: no valid host');
      return failScheduling(f, records, i, state, scheduleFault(outcome.failure));
    }
    return recordChoice(f, records, i, state, { hostList: outcome.destinations[0] ?? [], spec }, stored);
  });
}

/** The destination of a recast (an earlier delivery recorded it, and maybe cast it: the cell conductor dedups). */
async function recordedDestination(f: Flow, s: ActionState): Promise<Destination> {
  const { plan } = f;
  if (plan.def.kind === 'lifecycle' || s.instance === undefined) return { hostList: [], spec: undefined };
  const spec = scheduleSpec(plan, s.instance, await f.ports.api.requestSpec(plan.req.instanceUuid));
  if (plan.def.kind === 'unshelve') return { hostList: s.instance.buildHostList, spec };
  const m = s.migration;
  return {
    hostList:
      m?.destCompute == null
        ? []
        : recordedMoveHostList({ destCompute: m.destCompute, destNode: m.destNode }, s.instance, plan.req.cellUuid),
    spec,
  };
}

/** Before a confirm or revert is cast: the RequestSpec's flavor is the one the user settles on (see {@link savedSpecOnResizeDecision}). Idempotent. */
async function settleSpecFlavor(f: Flow, i: ActionInstance): Promise<void> {
  if (f.plan.req.action !== 'revertResize' && f.plan.req.action !== 'confirmResize') return;
  const saved = savedSpecOnResizeDecision(f.plan, i, await f.ports.api.requestSpec(i.uuid));
  if (saved !== undefined) await f.ports.api.saveRequestSpec(saved);
}

/** Casts `instance_action` to the cell conductor; a cast the broker refuses fails the action (see {@link failAction}). */
async function cast(f: Flow, i: ActionInstance, dest: Destination): Promise<ServerActionOutcome> {
  const { plan, ports } = f;
  await settleSpecFlavor(f, i);
  if ((await ports.cell.instanceAction(instanceActionRequest(plan, i, dest.hostList, dest.spec))) === 'unroutable') {
    await failAction(f, ports.records, i, unroutableFault(plan, ports.cellName));
    await ports.api.clearIntent(plan.req.instanceUuid, plan.req.requestId);
    f.log.error({ ...fields(plan), target_cell: ports.cellName }, 'server action refused by the broker: the cell has no conductor queue');
    return 'unroutable';
  }
  await ports.records.finishEvents(plan.req.instanceUuid, plan.req.requestId, plan.def.conductorEvents, f.settings.conductorHost);
  await ports.api.clearIntent(plan.req.instanceUuid, plan.req.requestId);
  f.log.info(
    { ...fields(plan), target_cell: ports.cellName, hosts: dest.hostList.map((s) => s.serviceHost) },
    'server action cast to the cell conductor',
  );
  return 'cast';
}

/** The guarded begin; a refusal clears the intent and ends the cast; a concurrent delivery that recorded it first is resumed from. */
async function begin(f: Flow, s: ActionState): Promise<{ step: ActionStep; state: ActionState } | 'refused'> {
  const { plan, ports } = f;
  const r = await ports.records.begin(beginOf(plan, f.settings.conductorHost, s.instance?.host ?? null));
  if (r.kind === 'not_found') return { step: 'gone', state: s };
  if (r.kind === 'duplicate') {
    const fresh = await readState(ports.records, plan);
    return { step: resumeStep(plan, fresh, await ports.api.intentPending(plan.req.instanceUuid, plan.req.requestId)), state: fresh };
  }
  if (r.kind === 'refused') {
    await ports.api.clearIntent(plan.req.instanceUuid, plan.req.requestId);
    f.log.warn(
      { ...fields(plan), vm_state: r.instance.vmState, task_state: r.instance.taskState },
      'server action refused: the instance state changed meanwhile',
    );
    return 'refused';
  }
  return { step: plan.def.kind === 'lifecycle' ? 'cast' : 'schedule', state: { ...s, instance: r.instance } };
}

/** Under the lock: what an expired request still has to do, given what the cell holds (see {@link expire}). */
async function decideExpired(
  f: Flow,
  records: Records,
  state: ActionState,
  retried = false,
): Promise<{ step: ActionStep | 'expired'; state: ActionState }> {
  const { plan } = f;
  const step = resumeStep(plan, state, true);
  if (step === 'schedule' && state.instance !== undefined) {
    await failAction(f, records, state.instance, expiredFault(plan));
    return { step: 'expired', state };
  }
  if (step !== 'begin' || retried) return { step, state };
  const b = beginOf(plan, f.settings.conductorHost, state.instance?.host ?? null);
  const r = await records.giveUp({
    instanceUuid: plan.req.instanceUuid,
    requestId: plan.req.requestId,
    action: plan.req.action,
    userId: plan.req.userId,
    projectId: plan.req.projectId,
    event: b.refusedEvent,
    host: b.refusedEventHost,
    fault: expiredFault(plan),
  });
  if (r === 'recorded') return { step: 'expired', state };
  if (r === 'not_found') return { step: 'gone', state };
  // NOTE: a delivery recorded the action first (it waited on the action's key): decide from what it did.
  return decideExpired(f, records, await readState(records, plan), true);
}

/**
 * A cast the api gave up on (its intent expired unapplied: `expired_after_s`), decided under the
 * instance's server-action lock so that a late delivery of the same request cannot interleave: an
 * action no delivery took up is recorded as failed (its event in Error, a fault: the user sees why
 * nothing happened) and nothing else changes; one begun but not scheduled yet fails like any
 * action that cannot go on (task_state back, claims back, migration `error`); one past scheduling
 * (destination claimed and recorded) is carried on, as its redelivery would be.
 */
async function expire(f: Flow): Promise<ServerActionOutcome> {
  const { plan, ports } = f;
  const { step, state } = await ports.records.exclusive(plan.req.instanceUuid, (records) =>
    readState(records, plan).then((s) => decideExpired(f, records, s)),
  );
  if (step === 'gone' || state.instance === undefined) return gone(f);
  if (step === 'cast') return cast(f, state.instance, await recordedDestination(f, state));
  await ports.api.clearIntent(plan.req.instanceUuid, plan.req.requestId);
  if (step !== 'expired') return 'settled';
  f.log.warn(
    { ...fields(plan), expired_after_s: plan.req.expiredAfterS },
    'server action given up by the api before it was taken up: recorded as failed',
  );
  return 'expired';
}

/**
 * Carries out one `server_action` cast (see the module comment). Throws only what the ports throw
 * (a dependency down: the cast is retried, and resumes where it stopped).
 */
export async function runServerAction(
  ports: ServerActionPorts,
  log: ConductorLog,
  settings: ServerActionSettings,
  plan: ActionPlan,
): Promise<ServerActionOutcome> {
  const f: Flow = { ports, log, settings, plan };
  if (plan.req.expiredAfterS > 0) return expire(f);
  let state = await readState(ports.records, plan);
  let step = resumeStep(plan, state, await ports.api.intentPending(plan.req.instanceUuid, plan.req.requestId));
  if (step === 'begin') {
    const b = await begin(f, state);
    if (b === 'refused') return b;
    ({ step, state } = b);
  }
  let dest: Destination | undefined;
  if (step === 'schedule') {
    const s = await schedule(f);
    if (s.step === 'no_valid_host') {
      await ports.api.clearIntent(plan.req.instanceUuid, plan.req.requestId);
      return 'no_valid_host';
    }
    ({ step, state, dest } = s);
  }
  if (step === 'gone' || state.instance === undefined) return gone(f);
  if (step === 'cast') return cast(f, state.instance, dest ?? (await recordedDestination(f, state)));
  await ports.api.clearIntent(plan.req.instanceUuid, plan.req.requestId);
  return 'settled';
}
