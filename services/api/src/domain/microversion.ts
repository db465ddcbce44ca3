import { ApiError } from './errors';

/** A compute API microversion, `major.minor`. */
export interface Microversion {
  readonly major: number;
  readonly minor: number;
}

/**
 * The microversions served, listed in one place (Nova's api_version_request.py history,
 * trimmed to what is implemented): 2.3 extended OS-EXT-SRV-ATTR fields; 2.9 `locked`;
 * 2.11 os-services `forced_down` (view) and `PUT /os-services/force-down`; 2.14 evacuate
 * without `onSharedStorage`, answering no body; 2.16 `host_status` (admin); 2.19
 * `description` (rebuild too); 2.23 `migration_type` and live-migration `links` in
 * os-migrations, `GET /servers/{id}/migrations[/{id}]`; 2.25 os-migrateLive
 * `block_migration: "auto"`, no `disk_over_commit`; 2.26 `tags`; 2.29/2.30 evacuate /
 * os-migrateLive `force` (the host claimed directly: no scheduler filter, placement's capacity);
 * 2.37 `networks` required ("none"/"auto"); 2.41 aggregate `uuid` in os-aggregates views; 2.47 flavor embedded in servers; 2.53 service
 * and hypervisor uuids, `PUT /os-services/{id}` with `status` and/or `forced_down`; 2.54
 * rebuild `key_name` (null only: no key pairs); 2.55 flavor `description`; 2.56 migrate
 * `host`; 2.57 rebuild `user_data` (no `personality`); 2.58 instance actions `updated_at`
 * and paging (`limit`, `marker`, `changes-since`); 2.59 os-migrations paging, `uuid`,
 * `changes-since`, `migrations_links`; 2.60 multiattach volumes (there are no volumes:
 * nothing changes); 2.61 flavor `extra_specs` in flavor views; 2.62 instance-action events
 * carry `host`/`hostId`; 2.63 `trusted_image_certificates` (always null: there is no image
 * signature verification, and a create or rebuild giving certificates is a 400); 2.64
 * server groups with one `policy` and `rules` (`max_server_per_host`); 2.65 aborting a queued or
 * preparing live migration (`DELETE /servers/{id}/migrations/{id}` is not served at any version
 * here: nothing changes); 2.66 `changes-before` on server lists, instance actions and
 * os-migrations; 2.67 `volume_type` in `block_device_mapping_v2` (known to the schema, but any
 * mapping is a 400: there is no block storage); 2.68 no `force` on evacuate / os-migrateLive;
 * 2.69 minimal records from a cell that does not answer (server lists and show, os-services),
 * which below 2.69 lists skip and a show answers with Nova's 500.
 */
export const MIN_VERSION: Microversion = { major: 2, minor: 1 };
export const MAX_VERSION: Microversion = { major: 2, minor: 69 };

export const versionString = (v: Microversion): string => `${v.major}.${v.minor}`;
export const atLeast = (v: Microversion, minor: number): boolean => v.major > 2 || (v.major === 2 && v.minor >= minor);

const cmp = (a: Microversion, b: Microversion): number => a.major - b.major || a.minor - b.minor;

/** The requested version string from the headers (`OpenStack-API-Version: compute X.Y` wins). Pure. */
export function requestedVersion(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  const first = (h: string | string[] | undefined): string | undefined => (Array.isArray(h) ? h.join(',') : h);
  const modern = first(headers['openstack-api-version']);
  if (modern !== undefined) {
    for (const part of modern.split(',')) {
      const [service, value] = part.trim().split(/\s+/, 2);
      if (service?.toLowerCase() === 'compute' && value !== undefined) return value;
    }
  }
  return first(headers['x-openstack-nova-api-version'])?.trim();
}

/**
 * Negotiates the version as Nova does: absent → 2.1; `latest` → the maximum; malformed →
 * 400; outside [min, max] → 406 with Nova's message. Pure.
 */
export function negotiate(requested: string | undefined): Microversion {
  if (requested === undefined || requested === '') return MIN_VERSION;
  if (requested.toLowerCase() === 'latest') return MAX_VERSION;
  const m = /^([1-9]\d*)\.(0|[1-9]\d*)$/.exec(requested);
  if (m === null) throw new ApiError(400, `API Version String ${requested} is of invalid format. Must be of format MajorNum.MinorNum.`);
  const v = { major: Number(m[1]), minor: Number(m[2]) };
  if (cmp(v, MIN_VERSION) < 0 || cmp(v, MAX_VERSION) > 0) {
    throw new ApiError(
      406,
      `Version ${requested} is not supported by the API. Minimum is ${versionString(MIN_VERSION)} and maximum is ${versionString(MAX_VERSION)}.`,
    );
  }
  return v;
}
