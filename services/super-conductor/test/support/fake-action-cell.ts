/**
 * In-memory ports of a server action (ServerActionPorts) that keep the contracts the real adapters
 * keep: guarded begin with the action's unique key, guarded destination and failure, an exclusive
 * section that serializes per instance, a conductor that may refuse casts, a scheduler whose next
 * answer the test sets, placement's revert and release. Every call is logged in order.
 */
import type { Flavor, InstanceActionRequest, MoveContext, RequestSpec, Selection } from '@cellsched/wire';
import type {
  ActionBegin,
  ActionFailure,
  ActionGiveUp,
  ActionInstance,
  ActionState,
  ComputeServiceState,
  SelectOutcome,
  ServerActionPorts,
  ServerActionRecords,
} from '../../src/ports';

export const FLAVOR: Flavor = {
  id: 1,
  flavorid: '1',
  name: 'm1.small',
  vcpus: 1,
  memoryMb: 2048,
  rootGb: 20,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs: {},
};
export const BIG: Flavor = {
  id: 3,
  flavorid: '3',
  name: 'm1.medium',
  vcpus: 2,
  memoryMb: 4096,
  rootGb: 40,
  ephemeralGb: 0,
  swap: 0,
  extraSpecs: {},
};

export const sel = (host: string, cellUuid = 'cell-1'): Selection => ({
  computeNodeUuid: `${host}-cn`,
  serviceHost: host,
  nodename: `${host}-node`,
  cellUuid,
  availabilityZone: 'nova',
  allocationRequest: { json: '{}', version: '1.36' },
});

interface Action {
  failed: boolean;
  events: Map<string, string>;
}
interface Migration {
  uuid: string;
  type: string;
  status: string;
  source: string | null;
  destCompute: string | null;
  destNode: string | null;
  oldType: number | null;
  newType: number | null;
}

/** One instance's cell, API DB and neighbours. */
export class FakeActionCell {
  instance: (ActionInstance & { deleted?: boolean }) | undefined;
  readonly actions = new Map<string, Action>();
  readonly migrations = new Map<string, Migration>();
  readonly faults: string[] = [];
  readonly casts: InstanceActionRequest[] = [];
  readonly log: string[] = [];
  readonly selections: { spec: RequestSpec; move: MoveContext | undefined; numAlternates: number }[] = [];
  /** Compute services by host (a forced live migration's check reads them). */
  readonly services = new Map<string, ComputeServiceState>();
  readonly savedSpecs: RequestSpec[] = [];
  intent: string | undefined;
  spec: RequestSpec | undefined;
  conductorServed = true;
  next: () => Promise<SelectOutcome> = async () => ({ kind: 'selected', destinations: [[sel('h2'), sel('h3')]] });
  private tail: Promise<unknown> = Promise.resolve();

  constructor(i: Partial<ActionInstance> = {}) {
    this.instance = {
      uuid: 'a0b1c2d3-0000-4000-8000-000000000001',
      projectId: 'p1',
      userId: 'u1',
      vmState: 'active',
      taskState: null,
      host: 'h1',
      node: 'h1-node',
      flavor: FLAVOR,
      oldFlavor: undefined,
      imageRef: 'img',
      availabilityZone: 'nova',
      buildHostList: [],
      ...i,
    };
  }

  private live(): ActionInstance | undefined {
    return this.instance?.deleted === true ? undefined : this.instance;
  }

  private readonly records: Omit<ServerActionRecords, 'exclusive'> = {
    read: async (_uuid, requestId, migrationUuid): Promise<ActionState> => {
      const a = this.actions.get(requestId);
      const m = migrationUuid === undefined ? undefined : this.migrations.get(migrationUuid);
      return {
        instance: this.live(),
        action: a === undefined ? undefined : { failed: a.failed },
        migration: m && { status: m.status, destCompute: m.destCompute, destNode: m.destNode },
      };
    },
    begin: async (b: ActionBegin) => {
      const i = this.live();
      if (i === undefined) return { kind: 'not_found' };
      if (this.actions.has(b.requestId)) return { kind: 'duplicate' };
      const action: Action = { failed: false, events: new Map() };
      this.actions.set(b.requestId, action);
      if (!b.vmStates.includes(i.vmState) || !b.fromTaskStates.includes(i.taskState)) {
        action.failed = true;
        action.events.set(`${b.refusedEvent}@${b.refusedEventHost ?? ''}`, `Error: ${b.refusedDetails(i)}`);
        this.log.push(`refused ${b.action}`);
        return { kind: 'refused', instance: i };
      }
      this.instance = { ...i, taskState: b.taskState, buildHostList: b.clearHostList ? [] : i.buildHostList };
      for (const e of b.events) action.events.set(`${e}@${b.conductorHost}`, 'started');
      if (b.migration !== undefined && !this.migrations.has(b.migration.uuid)) {
        const types = b.migration.instanceTypeIds(i.flavor);
        this.migrations.set(b.migration.uuid, {
          ...b.migration,
          source: i.host,
          destCompute: null,
          destNode: null,
          oldType: types.old,
          newType: types.new,
        });
      }
      this.log.push(`begin ${b.action} ${b.taskState ?? '-'}`);
      return { kind: 'applied', instance: this.instance };
    },
    recordDestination: async (d) => {
      const i = this.live();
      if (i === undefined) return 'gone';
      const chosen = d.hostList[0] as Selection;
      if (d.migration !== undefined) {
        const m = this.migrations.get(d.migration.uuid);
        if (m === undefined || m.status !== d.migration.fromStatus) return 'stale';
        m.destCompute = chosen.serviceHost;
        m.destNode = chosen.nodename;
        this.instance = { ...i, buildHostList: d.hostList };
      } else {
        if (i.taskState !== 'unshelving') return 'stale';
        this.instance = { ...i, buildHostList: d.hostList };
      }
      this.log.push(`destination ${chosen.serviceHost}`);
      return 'recorded';
    },
    fail: async (f: ActionFailure) => {
      const i = this.live();
      if (i === undefined) return 'gone';
      if (f.migration !== undefined) {
        const m = this.migrations.get(f.migration.uuid);
        if (m !== undefined && m.status === f.migration.fromStatus) m.status = 'error';
      }
      if (i.taskState === f.taskState) {
        this.instance = { ...i, taskState: null, ...(f.vmState === undefined ? {} : { vmState: f.vmState }) };
        this.faults.push(f.fault.message);
      }
      const a = this.actions.get(f.requestId);
      if (a !== undefined) {
        a.failed = true;
        for (const e of f.events) a.events.set(`${e.event}@${e.host ?? ''}`, 'Error');
      }
      this.log.push('fail');
      return 'failed';
    },
    giveUp: async (g: ActionGiveUp) => {
      const i = this.live();
      if (i === undefined) return 'not_found';
      if (this.actions.has(g.requestId)) return 'duplicate';
      this.actions.set(g.requestId, { failed: true, events: new Map([[`${g.event}@${g.host ?? ''}`, `Error: ${g.fault.message}`]]) });
      this.faults.push(g.fault.message);
      this.log.push(`given up ${g.action}`);
      return 'recorded';
    },
    computeService: async (host) => this.services.get(host),
    finishEvents: async (_uuid, requestId, events, host) => {
      const a = this.actions.get(requestId);
      for (const e of events) a?.events.set(`${e}@${host}`, 'Success');
    },
  };

  /** The ports, as one delivery of the cast sees them. */
  ports(): ServerActionPorts {
    return {
      records: {
        ...this.records,
        exclusive: <T>(_uuid: string, work: (r: Omit<ServerActionRecords, 'exclusive'>) => Promise<T>): Promise<T> => {
          const run = this.tail.then(() => work(this.records));
          this.tail = run.catch(() => undefined);
          return run;
        },
      },
      cell: {
        instanceAction: async (r) => {
          if (!this.conductorServed) {
            this.log.push('cast refused');
            return 'unroutable';
          }
          this.casts.push(r);
          this.log.push(`cast ${r.action} [${r.hostList.map((s) => s.serviceHost).join(',')}]`);
          return 'sent';
        },
      },
      cellName: 'cell1',
      api: {
        requestSpec: async () => this.spec,
        saveRequestSpec: async (s) => {
          this.savedSpecs.push(s);
          this.spec = s;
        },
        intentPending: async (_uuid, requestId) => this.intent === requestId,
        clearIntent: async (_uuid, requestId) => {
          if (this.intent === requestId) this.intent = undefined;
          this.log.push('intent cleared');
        },
      },
      selector: {
        selectDestinations: async (spec, _uuids, numAlternates, move) => {
          this.selections.push({ spec, move, numAlternates });
          this.log.push(`select${move === undefined ? '' : ' move'}`);
          return this.next();
        },
      },
      claims: {
        revertMove: async (i, m) => {
          this.log.push(`revert ${i === this.instance?.uuid ? 'instance' : i} ${m === [...this.migrations.keys()][0] ? 'migration' : m}`);
        },
        release: async (uuids) => {
          this.log.push(`release ${uuids.length}`);
        },
      },
    };
  }
}
