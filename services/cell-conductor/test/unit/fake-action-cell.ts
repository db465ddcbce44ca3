/**
 * One instance's cell in memory for the action state machines' unit tests (no I/O): the instance
 * row, its task, its migration, placement's consumers (as hosts), the broker (hosts it refuses),
 * and everything that happened, in order. `drive` plays the computes: it answers each step cast
 * with the outcome the test scripts for it.
 */
import type { Flavor, InstanceStepRequest, Selection } from '@cellsched/wire';
import { onInstanceAction, onStepReport } from '../../src/domain/action-flow';
import type { ActionInstance, ActionRequest, ActionTask, Fault, MigrationView, StepEvent } from '../../src/domain/actions/types';
import type { ActionPorts, ActionTransaction, BuildLog, NewActionTask } from '../../src/ports';

export const SMALL: Flavor = {
  id: 0,
  flavorid: '1',
  name: 'm1.small',
  vcpus: 1,
  memoryMb: 2048,
  rootGb: 20,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs: {},
};
export const MEDIUM: Flavor = {
  id: 0,
  flavorid: '2',
  name: 'm1.medium',
  vcpus: 2,
  memoryMb: 4096,
  rootGb: 40,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs: {},
};

export const sel = (host: string): Selection => ({
  computeNodeUuid: `${host}-uuid`,
  serviceHost: host,
  nodename: `${host}-node`,
  cellUuid: 'c',
  availabilityZone: '',
  allocationRequest: { json: '{}', version: '1.36' },
});

export const INSTANCE = '11111111-1111-4111-8111-111111111111';
export const MIGRATION = '22222222-2222-4222-8222-222222222222';

type Row = Omit<ActionInstance, 'wire'>;
type Outcome = 'ok' | 'fail' | 'lost';

const silent: BuildLog = { info: () => undefined, warn: () => undefined };

export class FakeActionCell {
  row: Row | undefined;
  task: (ActionTask & { deadlineAt: Date }) | undefined;
  migration: MigrationView | undefined;
  /** consumer → host holding its allocation (placement). */
  readonly alloc = new Map<string, string>();
  readonly faults: Fault[] = [];
  readonly events: string[] = [];
  /** The details of each event (its failure), in order. */
  readonly eventDetails: (string | undefined)[] = [];
  readonly finished: string[] = [];
  readonly casts: (InstanceStepRequest & { host: string })[] = [];
  readonly terminated: string[] = [];
  readonly log: string[] = [];
  /** Hosts placement has room on (claims elsewhere fail). */
  fits: readonly string[] = [];
  /** Hosts the broker refuses casts to. */
  unroutable: readonly string[] = [];
  /** Hosts whose compute service is deleted or forced down (the step watchdog fails their steps at once). */
  goneHosts: readonly string[] = [];
  now = new Date('2030-01-01T00:00:00Z');

  constructor(row: Partial<Row> = {}) {
    this.row = {
      uuid: INSTANCE,
      projectId: 'p',
      userId: 'u',
      vmState: 'active',
      taskState: null,
      powerState: 1,
      host: 'src',
      node: 'src-node',
      flavor: SMALL,
      oldFlavor: undefined,
      newFlavor: undefined,
      imageRef: 'img-1',
      ...row,
    };
    if (this.row.host !== null) this.alloc.set(INSTANCE, this.row.host);
  }

  /** The super-conductor's part of a move: the migration record and ClaimMove of the first destination. */
  withMigration(type: string, status: string, dest: string | null, claimed = true): this {
    this.migration = {
      uuid: MIGRATION,
      instanceUuid: INSTANCE,
      migrationType: type,
      status,
      sourceCompute: this.row?.host ?? null,
      sourceNode: this.row?.node ?? null,
      destCompute: dest,
      destNode: dest === null ? null : `${dest}-node`,
    };
    if (claimed && dest !== null) {
      this.alloc.set(MIGRATION, this.alloc.get(INSTANCE) ?? '');
      this.alloc.set(INSTANCE, dest);
    }
    return this;
  }

  private wire(r: Row): ActionInstance {
    return { ...r, wire: { uuid: r.uuid, host: r.host ?? '', flavor: r.flavor } as ActionInstance['wire'] };
  }

  private tx(): ActionTransaction {
    return {
      updateInstance: async (_uuid, c) => {
        const defined = Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined));
        this.row = {
          ...(this.row as Row),
          ...defined,
          oldFlavor: c.oldFlavor === null ? undefined : (c.oldFlavor ?? this.row?.oldFlavor),
          newFlavor: c.newFlavor === null ? undefined : (c.newFlavor ?? this.row?.newFlavor),
        } as Row;
        return this.wire(this.row);
      },
      updateMigration: async (_uuid, c) => {
        if (this.migration === undefined) return undefined;
        this.migration = { ...this.migration, ...Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)) };
        return this.migration;
      },
      endMigration: async () => {
        if (this.migration !== undefined && !['error', 'confirmed', 'reverted', 'completed'].includes(this.migration.status))
          this.migration = { ...this.migration, status: 'error' };
      },
      addFault: async (_uuid, f) => {
        this.faults.push(f);
      },
      recordEvent: async (_inst, _req, _action, e: StepEvent) => {
        this.events.push(`${e.event} ${e.host ?? '-'} ${e.ok ? 'ok' : 'error'}`);
        this.eventDetails.push(e.details);
      },
      finishAction: async (_uuid, requestId) => {
        this.finished.push(requestId);
      },
      startTask: async (_uuid, t: NewActionTask) => {
        this.task = {
          requestId: t.requestId,
          action: t.action,
          step: t.next.step,
          stepHost: t.next.host,
          attempt: t.next.attempt,
          enteredBy: 'action',
          migrationUuid: t.migrationUuid,
          hostList: t.next.hostList ?? [],
          requestSpec: t.requestSpec,
          params: t.params,
          priorVmState: t.priorVmState,
          failure: null,
          deadlineAt: t.deadlineAt,
        };
      },
      advanceTask: async (_uuid, from, n) => {
        const t = this.task;
        if (
          t === undefined ||
          t.requestId !== from.requestId ||
          t.step !== from.step ||
          t.stepHost !== from.stepHost ||
          t.attempt !== from.attempt
        )
          return undefined;
        this.task = {
          ...t,
          step: n.step,
          stepHost: n.host,
          attempt: n.attempt,
          deadlineAt: n.deadlineAt,
          enteredBy: n.enteredBy,
          hostList: n.hostList ?? t.hostList,
          failure: n.failure ?? t.failure,
        };
        return this.task;
      },
      endTask: async (_uuid, requestId) => {
        if (this.task?.requestId === requestId) this.task = undefined;
      },
    };
  }

  ports(): ActionPorts {
    const fits = (host: string): boolean => this.fits.includes(host);
    return {
      actions: {
        withLockedAction: async (_uuid, o, fn) => {
          const migration = this.migration?.uuid === (this.task?.migrationUuid ?? o.migrationUuid) ? this.migration : undefined;
          const snap =
            this.row === undefined
              ? undefined
              : { instance: this.wire(this.row), task: this.task, migration, actionFinished: this.finished.includes(o.requestId) };
          return fn(snap, this.tx(), this.migration?.uuid === o.migrationUuid ? this.migration : undefined);
        },
        overdueTasks: async () => {
          const t = this.task;
          const hostGone = t !== undefined && this.goneHosts.includes(t.stepHost);
          return t === undefined || (t.deadlineAt > this.now && !hostGone)
            ? []
            : [
                {
                  instanceUuid: INSTANCE,
                  requestId: t.requestId,
                  step: t.step,
                  stepHost: t.stepHost,
                  attempt: t.attempt,
                  hostGone,
                  migrationUuid: t.migrationUuid ?? '',
                  traceParent: null,
                },
              ];
        },
        evacuationsAwaitingSource: async (hosts) =>
          this.migration?.status === 'done' && hosts.includes(this.migration.sourceCompute ?? '')
            ? [{ migration: this.migration, instance: this.row === undefined ? undefined : this.wire(this.row) }]
            : [],
        unconfirmedResizes: async () =>
          this.migration?.status === 'finished' && this.row?.vmState === 'resized' && this.task === undefined
            ? [{ migration: this.migration, userId: 'u', projectId: 'p' }]
            : [],
        migrationsOfDeletedInstances: async () =>
          this.row === undefined &&
          this.migration !== undefined &&
          !['error', 'confirmed', 'reverted', 'completed'].includes(this.migration.status)
            ? [this.migration]
            : [],
        getMigration: async (uuid) => (this.migration?.uuid === uuid ? this.migration : undefined),
        resizeMigrationOf: async () =>
          this.migration !== undefined && ['finished', 'confirming', 'reverting'].includes(this.migration.status)
            ? this.migration.uuid
            : undefined,
        setMigrationStatus: async (_uuid, status, expected) => {
          if (this.migration === undefined || !expected.includes(this.migration.status)) return false;
          this.migration = { ...this.migration, status };
          return true;
        },
        endMigration: async (uuid) => this.tx().endMigration(uuid),
      },
      placement: {
        claimMove: async (_c, s, mig) => {
          this.log.push(`claimMove ${s.serviceHost}`);
          if (!fits(s.serviceHost))
            return { kind: 'no_capacity', message: `${s.serviceHost} full`, resourceClass: 'VCPU', providerUuid: undefined };
          if (!this.alloc.has(mig)) {
            this.alloc.set(mig, this.alloc.get(INSTANCE) ?? '');
          }
          this.alloc.set(INSTANCE, s.serviceHost);
          return { kind: 'claimed', consumerGeneration: 1 };
        },
        claimSelection: async (_c, s) => {
          this.log.push(`claim ${s.serviceHost}`);
          if (!fits(s.serviceHost))
            return { kind: 'no_capacity', message: `${s.serviceHost} full`, resourceClass: 'VCPU', providerUuid: undefined };
          this.alloc.set(INSTANCE, s.serviceHost);
          return { kind: 'claimed', consumerGeneration: 1 };
        },
        revertMove: async (inst, mig) => {
          this.log.push('revertMove');
          const src = this.alloc.get(mig);
          if (src !== undefined) {
            this.alloc.set(inst, src);
            this.alloc.delete(mig);
          }
        },
        release: async (consumer) => {
          this.log.push(`release ${consumer === INSTANCE ? 'instance' : 'migration'}`);
          this.alloc.delete(consumer);
        },
      },
      compute: {
        instanceStep: async (host, req) => {
          const refused = this.unroutable.includes(host);
          this.log.push(`cast ${req.step} ${host} #${req.attempt}${refused ? ' refused' : ''}`);
          if (!refused) this.casts.push({ ...req, host });
          return refused ? 'unroutable' : 'sent';
        },
        terminateInstance: async (host) => {
          this.terminated.push(host);
          return 'sent';
        },
      },
      clock: { now: () => this.now },
      stepTimeoutMs: 60_000,
    };
  }

  /** Takes an action as the super-conductor's cast would carry it. */
  async act(r: Partial<ActionRequest> & { action: string }): Promise<void> {
    await onInstanceAction(
      this.ports(),
      silent,
      {
        instanceUuid: INSTANCE,
        requestId: 'req-1',
        rebootType: '',
        imageRef: '',
        displayName: '',
        migrationUuid: this.migration?.uuid ?? '',
        hostList: [],
        newFlavor: undefined,
        requestSpec: undefined,
        userId: 'u',
        projectId: 'p',
        blockMigration: '',
        ...r,
      },
      null,
    );
  }

  /** Reports one cast step's outcome ('lost': no result at all); a failure has the compute's `code`. */
  async report(c: InstanceStepRequest & { host: string }, outcome: Outcome, code = 'compute.step.failed'): Promise<void> {
    if (outcome === 'lost') return;
    await onStepReport(this.ports(), silent, {
      instanceUuid: c.instance?.uuid ?? INSTANCE,
      host: c.host,
      step: c.step,
      migrationUuid: c.migrationUuid,
      attempt: c.attempt,
      requestId: c.requestId,
      origin: 'compute',
      failure:
        outcome === 'ok'
          ? undefined
          : { code, message: `${c.step} failed on ${c.host}`, retryable: false, expected: true, metadata: {}, diagnosis: [] },
    });
  }

  /**
   * Plays the computes: answers every cast step, in order, with `script[step@host]` (default ok),
   * until nothing is cast any more. Returns the steps answered (`step@host`).
   */
  async drive(script: Readonly<Record<string, Outcome>> = {}): Promise<string[]> {
    const done: string[] = [];
    for (let i = 0; i < this.casts.length && i < 50; i++) {
      const c = this.casts[i] as InstanceStepRequest & { host: string };
      const key = `${c.step}@${c.host}`;
      done.push(key);
      await this.report(c, script[key] ?? 'ok');
    }
    return done;
  }

  /** The instance as a line: status, host, flavor, placement. */
  state(): string {
    const r = this.row;
    if (r === undefined) return 'deleted';
    const held = [...this.alloc]
      .map(([c, h]) => `${c === INSTANCE ? 'inst' : 'mig'}@${h}`)
      .sort()
      .join(' ');
    return `${r.vmState}/${r.taskState ?? '-'} on ${r.host ?? '-'} ${r.flavor.name}${r.newFlavor === undefined ? '' : `→${r.newFlavor.name}`} [${held}]`;
  }
}
