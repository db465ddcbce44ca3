import { createHash } from 'node:crypto';
import type { Caller } from './auth';
import { atLeast, type Microversion } from './microversion';
import type { ServerRecord } from './server-record';
import { statusOf } from './server-status';

/** What a view needs besides the record: the caller, the version and the link base. */
export interface ViewContext {
  readonly caller: Caller;
  readonly version: Microversion;
  /** `http://host:port` of the request. */
  readonly baseUrl: string;
}

type Json = Record<string, unknown>;
const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString().replace(/\.\d{3}Z$/, 'Z'));
const isoMicro = (d: Date | null): string | null => (d === null ? null : d.toISOString().replace('Z', '000'));

/** Nova's self/bookmark links for a resource collection item. Pure. */
export function links(ctx: ViewContext, collection: string, id: string): Json[] {
  return [
    { rel: 'self', href: `${ctx.baseUrl}/v2.1/${collection}/${id}` },
    { rel: 'bookmark', href: `${ctx.baseUrl}/${collection}/${id}` },
  ];
}

/** Nova's hostId: sha224(project_id + host), empty without a host. Pure. */
export function hostId(projectId: string, host: string | null): string {
  return host === null || host === ''
    ? ''
    : createHash('sha224')
        .update(projectId + host)
        .digest('hex');
}

/** `GET /servers` item: id, name, links (minimal record: id, status UNKNOWN, links). Pure. */
export function serverSummary(r: ServerRecord, ctx: ViewContext): Json {
  if (r.vmState === 'unknown') return { id: r.uuid, status: 'UNKNOWN', links: links(ctx, 'servers', r.uuid) };
  return { id: r.uuid, name: r.name, links: links(ctx, 'servers', r.uuid) };
}

function flavorView(r: ServerRecord, ctx: ViewContext): Json {
  const f = r.flavor;
  if (f === undefined) return {};
  if (!atLeast(ctx.version, 47)) return { id: f.flavorid, links: [{ rel: 'bookmark', href: `${ctx.baseUrl}/flavors/${f.flavorid}` }] };
  return {
    vcpus: f.vcpus,
    ram: f.memoryMb,
    disk: f.rootGb,
    ephemeral: f.ephemeralGb,
    swap: f.swap,
    original_name: f.name,
    extra_specs: { ...f.extraSpecs },
  };
}

function faultView(r: ServerRecord, ctx: ViewContext): Json | undefined {
  if (r.fault === undefined || (r.vmState !== 'error' && r.vmState !== 'deleted')) return undefined;
  const fault: Json = { code: r.fault.code, created: iso(r.fault.createdAt), message: r.fault.message };
  // NOTE: Nova shows details only to admins or when the fault is not a 500 (could leak internals).
  if (r.fault.details !== null && (ctx.caller.isAdmin || r.fault.code !== 500)) fault.details = r.fault.details;
  return fault;
}

function adminAttributes(r: ServerRecord, ctx: ViewContext): Json {
  const attrs: Json = {
    'OS-EXT-SRV-ATTR:host': r.host,
    'OS-EXT-SRV-ATTR:hypervisor_hostname': r.node,
    'OS-EXT-SRV-ATTR:instance_name': `instance-${r.uuid.slice(0, 8)}`,
  };
  if (atLeast(ctx.version, 3)) {
    Object.assign(attrs, {
      'OS-EXT-SRV-ATTR:reservation_id': r.reservationId,
      'OS-EXT-SRV-ATTR:launch_index': r.launchIndex,
      'OS-EXT-SRV-ATTR:hostname': r.hostname,
      'OS-EXT-SRV-ATTR:kernel_id': '',
      'OS-EXT-SRV-ATTR:ramdisk_id': '',
      'OS-EXT-SRV-ATTR:root_device_name': null,
      'OS-EXT-SRV-ATTR:user_data': null,
    });
  }
  return attrs;
}

function versionedFields(r: ServerRecord, ctx: ViewContext): Json {
  const out: Json = {};
  if (atLeast(ctx.version, 9)) out.locked = false;
  if (atLeast(ctx.version, 16) && ctx.caller.isAdmin) out.host_status = r.hostStatus;
  if (atLeast(ctx.version, 19)) out.description = null;
  if (atLeast(ctx.version, 26)) out.tags = [];
  if (atLeast(ctx.version, 63)) out.trusted_image_certificates = null;
  return out;
}

/** Nova's `_progress_statuses`: the statuses a server view carries `progress` in. */
const PROGRESS_STATUSES: readonly string[] = ['ACTIVE', 'BUILD', 'REBUILD', 'RESIZE', 'VERIFY_RESIZE', 'MIGRATING'];

function imageView(r: ServerRecord, ctx: ViewContext): Json | string {
  return r.imageRef === '' ? '' : { id: r.imageRef, links: [{ rel: 'bookmark', href: `${ctx.baseUrl}/images/${r.imageRef}` }] };
}

/**
 * Nova's partial construct (2.69) for a server whose cell did not answer: id, status UNKNOWN,
 * tenant_id, created, links; for `GET /servers/{id}` (read with its RequestSpec) also image,
 * flavor, the zone asked for at boot (else "UNKNOWN"), power state 0 and user_id. Pure.
 */
function unknownDetail(r: ServerRecord, ctx: ViewContext): Json {
  const view: Json = {
    id: r.uuid,
    status: 'UNKNOWN',
    tenant_id: r.projectId,
    created: iso(r.createdAt),
    links: links(ctx, 'servers', r.uuid),
  };
  if (r.source !== 'request_spec') return view;
  return {
    ...view,
    image: imageView(r, ctx),
    flavor: flavorView(r, ctx),
    'OS-EXT-AZ:availability_zone': r.availabilityZone ?? 'UNKNOWN',
    'OS-EXT-STS:power_state': r.powerState,
    user_id: r.userId === '' ? 'UNKNOWN' : r.userId,
  };
}

/** `GET /servers/detail` item and `GET /servers/{id}` body, in Nova's shape for the version. Pure. */
export function serverDetail(r: ServerRecord, ctx: ViewContext): Json {
  if (r.vmState === 'unknown') return unknownDetail(r, ctx);
  const status = statusOf(r.vmState, r.taskState);
  const view: Json = {
    id: r.uuid,
    name: r.name,
    status,
    tenant_id: r.projectId,
    user_id: r.userId,
    metadata: {},
    hostId: hostId(r.projectId, r.host),
    image: imageView(r, ctx),
    flavor: flavorView(r, ctx),
    created: iso(r.createdAt),
    updated: iso(r.updatedAt),
    addresses: {},
    accessIPv4: '',
    accessIPv6: '',
    links: links(ctx, 'servers', r.uuid),
    'OS-DCF:diskConfig': 'MANUAL',
    'OS-EXT-AZ:availability_zone': r.availabilityZone ?? '',
    config_drive: '',
    key_name: null,
    'OS-SRV-USG:launched_at': isoMicro(r.launchedAt),
    'OS-SRV-USG:terminated_at': isoMicro(r.terminatedAt),
    'OS-EXT-STS:task_state': r.taskState,
    'OS-EXT-STS:vm_state': r.vmState,
    'OS-EXT-STS:power_state': r.powerState,
    'os-extended-volumes:volumes_attached': [],
    ...versionedFields(r, ctx),
  };
  if (PROGRESS_STATUSES.includes(status)) view.progress = 0;
  if (ctx.caller.isAdmin) Object.assign(view, adminAttributes(r, ctx));
  const fault = faultView(r, ctx);
  if (fault !== undefined) view.fault = fault;
  return view;
}

/** Keys Nova's rebuild answer leaves out before 2.75 (its view is built without AZ, usage, status, volumes, admin attributes). */
const NOT_IN_REBUILD =
  /^(OS-EXT-AZ:|OS-SRV-USG:|OS-EXT-STS:|OS-EXT-SRV-ATTR:|os-extended-volumes:)|^(config_drive|host_status|security_groups)$/;

/** The server in `POST /servers/{id}/action` rebuild's 202 (before 2.75: the detail view less those keys; `key_name` from 2.54). Pure. */
export function rebuildView(r: ServerRecord, ctx: ViewContext): Json {
  const full = serverDetail(r, ctx);
  if (atLeast(ctx.version, 75)) return full;
  const view = Object.fromEntries(Object.entries(full).filter(([k]) => !NOT_IN_REBUILD.test(k)));
  if (!atLeast(ctx.version, 54)) delete view.key_name;
  return view;
}
