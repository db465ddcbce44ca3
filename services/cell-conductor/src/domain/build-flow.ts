/**
 * The boot's state machine in the cell, over the ports: a build's results (success, a
 * non-reschedulable failure), the in-cell retry of a reschedulable one, a build cast the broker
 * refuses, and the watchdog's retry of a lost build. Each flow takes a snapshot under the row lock,
 * asks the pure decisions (build-attempt.ts, reschedule.ts, build-cast.ts, watchdog.ts) what to do,
 * and has the ports do it. Rerunnable as a whole (see the ports' contracts).
 */
import type { Selection, TerminateInstanceRequest } from '@cellsched/wire';
import type { BuildLog, BuildPorts, BuildTransaction, CastResult, ClaimConsumer } from '../ports';
import {
  abortFault,
  judgeAbort,
  judgeSuccess,
  type AttemptRef,
  type FailureReport,
  type InstanceSnapshot,
  type SuccessVerdict,
} from './build-attempt';
import { buildCastFor, refusedCastReport, type BuildCast } from './build-cast';
import {
  chooseAlternate,
  failureReason,
  judgeFailureReport,
  rescheduleChange,
  type AlternateClaim,
  type ReportVerdict,
} from './reschedule';
import { stuckBuildReport, terminatesOldAttempt, type StuckBuild } from './watchdog';

async function claimAlternate(ports: BuildPorts, consumer: ClaimConsumer, s: Selection): Promise<AlternateClaim> {
  const o = await ports.claimer.claimSelection(consumer, s);
  return o.kind === 'claimed' ? { kind: 'claimed' } : { kind: 'skipped', reason: o.message };
}

/** Records the failed attempt, claims the first alternate that fits (replace-claim) and moves the row there, or ERROR when none is left. */
async function retryOnAlternates(
  ports: BuildPorts,
  tx: BuildTransaction,
  v: Extract<ReportVerdict, { kind: 'retry' }>,
  r: FailureReport,
): Promise<BuildCast | undefined> {
  const { inst } = v;
  await tx.recordEvent(inst, r.requestId, 'compute_build', r.failedHost, { ok: false, details: failureReason(r) });
  // NOTE: the claim carries the instance's server group: placement refuses an alternate another member took meanwhile
  const consumer = { uuid: inst.uuid, projectId: inst.projectId, userId: inst.userId, group: inst.buildRequestSpec?.instanceGroup };
  const decision = await chooseAlternate(v.alternates, (s) => claimAlternate(ports, consumer, s));
  const change = rescheduleChange(inst, r, decision, ports.clock.now(), ports.buildTimeoutMs);
  if (change.kind === 'error') {
    await ports.claimer.release(inst.uuid);
    await tx.failBuild(inst.uuid, change.fault, { clearHost: true });
    return undefined;
  }
  const moved = await tx.moveBuild(inst.uuid, change.move);
  if (moved === undefined) return undefined;
  await tx.recordEvent(inst, r.requestId, 'reschedule', change.move.host, { ok: true, details: change.detail });
  return buildCastFor(moved, change.hostList, r.requestId);
}

/**
 * The in-cell retry of one failed attempt, inside the caller's row-locked transaction: judged by
 * (host, attempt) first, so a stale or repeated report changes nothing and a repeat whose cast may
 * have been lost returns the build to cast again. Returns the build to cast after commit.
 */
export async function rescheduleAttempt(
  ports: BuildPorts,
  tx: BuildTransaction,
  inst: InstanceSnapshot | undefined,
  r: FailureReport,
): Promise<BuildCast | undefined> {
  const verdict = judgeFailureReport(inst, r);
  if (verdict.kind === 'ignore') return undefined;
  if (verdict.kind === 'recast') return verdict.build;
  return retryOnAlternates(ports, tx, verdict, r);
}

/**
 * Casts a decided build (after its decision committed). One the broker refuses is that host's
 * failure for this request: the next alternate is claimed and cast to, in a new decision, until
 * one is accepted or none is left (ERROR with MaxRetriesExceeded, the fault naming the host).
 */
export async function castBuild(ports: BuildPorts, log: BuildLog, first: BuildCast): Promise<void> {
  let current: BuildCast | undefined = first;
  while (current !== undefined) {
    if ((await ports.compute.buildAndRunInstance(current.host, current.request)) === 'sent') return;
    const report = refusedCastReport(current);
    log.warn(
      { instance_uuid: first.instanceUuid, host: current.host, attempt: current.request.attempt },
      'build cast refused by the broker: trying the next alternate',
    );
    current = await ports.instances.withLockedInstance(report.instanceUuid, (inst, tx) => rescheduleAttempt(ports, tx, inst, report));
  }
}

/** Casts `terminate_instance`; one the broker refuses is done: no compute serves that host, so no guest of this instance runs there. */
export async function castTerminate(ports: BuildPorts, log: BuildLog, host: string, req: TerminateInstanceRequest): Promise<CastResult> {
  const result = await ports.compute.terminateInstance(host, req);
  if (result === 'unroutable') log.info({ instance_uuid: req.instanceUuid, host }, 'terminate not needed: no compute serves the host');
  return result;
}

/** `build_instances` (a reschedulable failure): decide under the row lock, then cast what was decided. */
export async function onBuildFailed(ports: BuildPorts, log: BuildLog, r: FailureReport): Promise<void> {
  const next = await ports.instances.withLockedInstance(r.instanceUuid, (inst, tx) => rescheduleAttempt(ports, tx, inst, r));
  if (next === undefined) {
    log.info({ instance_uuid: r.instanceUuid, failed_host: r.failedHost }, 'reschedule settled');
    return;
  }
  log.info(
    { instance_uuid: r.instanceUuid, failed_host: r.failedHost, host: next.host, attempt: next.request.attempt },
    'build rescheduled',
  );
  await castBuild(ports, log, next);
}

/**
 * A success the one-statement path did not apply, judged under the row lock: applied there if the
 * row builds that attempt on that host after all; otherwise a repeat or stale.
 */
async function judgeSuccessLocked(
  ports: BuildPorts,
  ref: AttemptRef & { readonly instanceUuid: string; readonly node: string; readonly requestId: string },
): Promise<SuccessVerdict> {
  return ports.instances.withLockedInstance(ref.instanceUuid, async (inst, tx) => {
    const v = judgeSuccess(inst, ref);
    if (v !== 'apply' || inst === undefined) return v;
    await tx.activate(inst.uuid, { node: ref.node === '' ? inst.node : ref.node, launchedAt: ports.clock.now() });
    await tx.recordEvent(inst, ref.requestId, 'compute_build', ref.host, { ok: true });
    return v;
  });
}

/**
 * `build_succeeded`: ACTIVE on the reporting host if it still builds that attempt there; a repeat
 * changes nothing; a stale report (deleted, moved on, settled) terminates that host's guest, so the
 * guest runs on one host only.
 */
export async function onBuildSucceeded(
  ports: BuildPorts,
  log: BuildLog,
  ref: AttemptRef & { readonly instanceUuid: string; readonly node: string; readonly requestId: string },
): Promise<void> {
  // NOTE: the common case (still building this attempt here) in one statement; anything else is judged under the lock
  const activated = await ports.instances.activateIfBuilding({
    instanceUuid: ref.instanceUuid,
    host: ref.host,
    attempt: ref.attempt,
    node: ref.node,
    launchedAt: ports.clock.now(),
    requestId: ref.requestId,
  });
  const verdict = activated ? 'apply' : await judgeSuccessLocked(ports, ref);
  log.info(
    { instance_uuid: ref.instanceUuid, host: ref.host, attempt: ref.attempt, verdict: verdict === 'apply' ? 'applied' : verdict },
    'build succeeded',
  );
  if (verdict === 'stale')
    await castTerminate(ports, log, ref.host, {
      instanceUuid: ref.instanceUuid,
      attempt: ref.attempt,
      reason: 'instance not building on this host',
    });
}

/**
 * `build_aborted` (a non-reschedulable failure): for the building attempt on the reporting host,
 * release the claim, then ERROR with the compute's failure as the fault; anything else changes nothing.
 */
export async function onBuildAborted(
  ports: BuildPorts,
  log: BuildLog,
  ref: AttemptRef & { readonly instanceUuid: string; readonly requestId: string; readonly failure: FailureReport['failure'] },
): Promise<void> {
  const applied = await ports.instances.withLockedInstance(ref.instanceUuid, async (inst, tx) => {
    if (!judgeAbort(inst, ref)) return false;
    const fault = abortFault(ref.failure, ref.host);
    await ports.claimer.release(inst.uuid);
    await tx.failBuild(inst.uuid, fault, { clearHost: false });
    await tx.recordEvent(inst, ref.requestId, 'compute_build', ref.host, { ok: false, details: fault.message });
    return true;
  });
  log.info({ instance_uuid: ref.instanceUuid, host: ref.host, attempt: ref.attempt, applied }, 'build aborted');
}

/**
 * The watchdog's retry of one stuck build: the same retry as `build_instances`, from the row's
 * alternates, exactly once per attempt (the retry bumps the attempt, so a second pass, a second
 * conductor or the dead compute's late report fail the guard); then the old attempt's guest is
 * terminated on a host that may still run it.
 */
export async function retryStuckBuild(ports: BuildPorts, log: BuildLog, s: StuckBuild): Promise<void> {
  const { next, movedOn } = await ports.instances.withLockedInstance(s.uuid, async (inst, tx) => {
    const report = stuckBuildReport(s, await tx.createRequestId(s.uuid));
    // NOTE: judged under the lock: the compute may have reported (ACTIVE, or failed) since the watchdog read the row
    const moving = judgeFailureReport(inst, report).kind === 'retry';
    return { next: await rescheduleAttempt(ports, tx, inst, report), movedOn: moving };
  });
  log.warn(
    {
      instance_uuid: s.uuid,
      host: s.host,
      attempt: s.attempt,
      host_down: s.hostDown,
      host_gone: s.hostGone,
      moved_on: movedOn,
      next_host: next?.host,
    },
    'build watchdog retried a lost build',
  );
  if (next !== undefined) await castBuild(ports, log, next);
  // NOTE: a live host may still run this attempt (its result cast was lost): only one host keeps the guest
  if (terminatesOldAttempt(s, movedOn))
    await castTerminate(ports, log, s.host, { instanceUuid: s.uuid, attempt: s.attempt, reason: 'build moved on by the watchdog' });
}
