import type { BuildRequest, InstanceMapping } from '@cellsched/api-db';
import type { RequestSpec } from '@cellsched/wire';
import type { InstanceFault, InstanceRecord } from '@cellsched/cell-db';
import type { HostStatus } from '../domain/host-status';
import type { ServerRecord } from '../domain/server-record';

/** A server not in a cell yet, from its BuildRequest (BUILD, task `scheduling`). Pure. */
export function fromBuildRequest(br: BuildRequest): ServerRecord {
  const i = br.instance;
  return {
    uuid: br.instanceUuid,
    projectId: br.projectId,
    userId: i.userId,
    name: i.displayName,
    flavor: i.flavor,
    imageRef: i.imageRef,
    vmState: 'building',
    taskState: i.taskState === '' ? 'scheduling' : i.taskState,
    powerState: 0,
    host: null,
    node: null,
    availabilityZone: i.availabilityZone === '' ? null : i.availabilityZone,
    launchedAt: null,
    terminatedAt: null,
    reservationId: i.reservationId,
    launchIndex: i.launchIndex,
    hostname: null,
    createdAt: i.createdAt ?? br.createdAt,
    updatedAt: i.createdAt ?? br.createdAt,
    fault: undefined,
    hostStatus: '',
    source: 'build_request',
  };
}

/** A server read from its cell's `instances` row (with its latest fault, if any, and its host's status). Pure. */
export function fromInstance(r: InstanceRecord, fault: InstanceFault | undefined, hostStatus: HostStatus): ServerRecord {
  return {
    uuid: r.uuid,
    projectId: r.projectId,
    userId: r.userId,
    name: r.displayName ?? '',
    flavor: r.flavor,
    imageRef: r.imageRef ?? '',
    vmState: r.vmState,
    taskState: r.taskState,
    powerState: r.powerState,
    host: r.host,
    node: r.node,
    availabilityZone: r.availabilityZone,
    launchedAt: r.launchedAt,
    terminatedAt: r.terminatedAt,
    reservationId: r.reservationId,
    launchIndex: r.launchIndex,
    hostname: r.hostname,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    fault,
    hostStatus,
    source: 'cell',
  };
}

/** A server whose cell did not answer: only what its InstanceMapping knows (status UNKNOWN). Pure. */
export function fromMapping(m: InstanceMapping): ServerRecord {
  return {
    uuid: m.instanceUuid,
    projectId: m.projectId,
    userId: m.userId ?? '',
    name: '',
    flavor: undefined,
    imageRef: '',
    vmState: 'unknown',
    taskState: null,
    powerState: 0,
    host: null,
    node: null,
    availabilityZone: null,
    launchedAt: null,
    terminatedAt: null,
    reservationId: null,
    launchIndex: 0,
    hostname: null,
    createdAt: m.createdAt,
    updatedAt: m.createdAt,
    fault: undefined,
    hostStatus: '',
    source: 'mapping',
  };
}

/**
 * A server whose cell did not answer, shown by `GET /servers/{id}` from 2.69: its mapping plus
 * what its RequestSpec knows (Nova's minimal construct: flavor, image, the zone asked for at
 * boot, user; power state 0). Pure.
 */
export function fromRequestSpec(m: InstanceMapping, spec: RequestSpec): ServerRecord {
  return {
    ...fromMapping(m),
    userId: spec.userId,
    flavor: spec.flavor,
    imageRef: spec.image?.id ?? '',
    availabilityZone: spec.availabilityZone === '' ? null : spec.availabilityZone,
    source: 'request_spec',
  };
}
