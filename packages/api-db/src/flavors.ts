import type { Flavor as WireFlavor } from '@cellsched/wire';
import { ApiDbError, type Queryable } from './db';
import { IMAGE_COLUMNS_PREFIXED, toImage, type Image, type ImageRow } from './images';

/** Nova's Flavor (the `flavors` row with its extra specs). */
export interface Flavor {
  readonly id: number;
  readonly flavorid: string;
  readonly name: string;
  readonly vcpus: number;
  readonly memoryMb: number;
  readonly rootGb: number;
  readonly ephemeralGb: number;
  readonly swap: number;
  readonly rxtxFactor: number;
  readonly isPublic: boolean;
  readonly disabled: boolean;
  readonly description: string | null;
  readonly extraSpecs: Readonly<Record<string, string>>;
}

interface Row {
  id: number;
  flavorid: string;
  name: string;
  vcpus: number;
  memory_mb: number;
  root_gb: number;
  ephemeral_gb: number;
  swap: number;
  rxtx_factor: number;
  is_public: boolean;
  disabled: boolean;
  description: string | null;
  extra_specs: Record<string, string>;
}

function toFlavor(r: Row): Flavor {
  return {
    id: r.id,
    flavorid: r.flavorid,
    name: r.name,
    vcpus: r.vcpus,
    memoryMb: r.memory_mb,
    rootGb: r.root_gb,
    ephemeralGb: r.ephemeral_gb,
    swap: r.swap,
    rxtxFactor: r.rxtx_factor,
    isPublic: r.is_public,
    disabled: r.disabled,
    description: r.description,
    extraSpecs: r.extra_specs,
  };
}

const SELECT = `SELECT f.id, f.flavorid, f.name, f.vcpus, f.memory_mb, f.root_gb, f.ephemeral_gb, f.swap, f.rxtx_factor,
  f.is_public, f.disabled, f.description,
  coalesce((SELECT jsonb_object_agg(s.key, s.value) FROM flavor_extra_specs s WHERE s.flavor_id = f.id), '{}'::jsonb) AS extra_specs
  FROM flavors f`;

/** The wire Flavor the RequestSpec and the instance carry (with Nova's integer `id`, which migrations record). Pure. */
export function toWireFlavor(f: Flavor): WireFlavor {
  return {
    id: f.id,
    flavorid: f.flavorid,
    name: f.name,
    vcpus: f.vcpus,
    memoryMb: f.memoryMb,
    rootGb: f.rootGb,
    ephemeralGb: f.ephemeralGb,
    swap: f.swap,
    extraSpecs: { ...f.extraSpecs },
  };
}

export interface NewFlavor {
  name: string;
  flavorid: string;
  vcpus: number;
  memoryMb: number;
  rootGb?: number;
  ephemeralGb?: number;
  swap?: number;
  rxtxFactor?: number;
  isPublic?: boolean;
  description?: string | null;
  extraSpecs?: Readonly<Record<string, string>>;
}

function validate(f: NewFlavor): void {
  const problems: string[] = [];
  if (f.name.trim() === '' || f.name.length > 255) problems.push('name must be 1-255 characters');
  if (!/^[\w.\- ]{1,255}$/.test(f.flavorid)) problems.push('flavorid must be 1-255 of letters, digits, _ - . and space');
  const ints: [string, number | undefined, number][] = [
    ['vcpus', f.vcpus, 1],
    ['memory_mb', f.memoryMb, 1],
    ['root_gb', f.rootGb, 0],
    ['ephemeral_gb', f.ephemeralGb, 0],
    ['swap', f.swap, 0],
  ];
  for (const [what, v, min] of ints) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < min || v > 2_147_483_647))
      problems.push(`${what} must be an integer >= ${min}`);
  }
  if (f.rxtxFactor !== undefined && !(f.rxtxFactor > 0)) problems.push('rxtx_factor must be > 0');
  if (problems.length > 0) throw new ApiDbError('api_db.flavor.invalid', `invalid flavor: ${problems.join('; ')}`);
}

/** Nova's FlavorIdExists or FlavorExists for a create that conflicted (the ID is named first, as Nova does). */
async function flavorExists(db: Queryable, f: NewFlavor): Promise<ApiDbError> {
  const r = await db.query<{ id_taken: boolean }>(
    'SELECT bool_or(flavorid = $1) AS id_taken FROM flavors WHERE flavorid = $1 OR name = $2',
    [f.flavorid, f.name],
  );
  return new ApiDbError(
    'api_db.flavor.exists',
    r.rows[0]?.id_taken === true ? `Flavor with ID ${f.flavorid} already exists.` : `Flavor with name ${f.name} already exists.`,
  );
}

/**
 * Creates a flavor with its extra specs in one statement. Not idempotent by design:
 * a name or flavorid already in use throws `api_db.flavor.exists` (Nova's FlavorIdExists or
 * FlavorExists, with Nova's message) and nothing is written. Bad values throw `api_db.flavor.invalid`.
 */
export async function createFlavor(db: Queryable, f: NewFlavor): Promise<Flavor> {
  validate(f);
  const specs = Object.entries(f.extraSpecs ?? {});
  const r = await db.query<{ id: number }>(
    `WITH f AS (INSERT INTO flavors (name, flavorid, vcpus, memory_mb, root_gb, ephemeral_gb, swap, rxtx_factor, is_public, description)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING RETURNING id),
     s AS (INSERT INTO flavor_extra_specs (flavor_id, key, value) SELECT f.id, k, v FROM f, unnest($11::text[], $12::text[]) AS e(k, v))
     SELECT id FROM f`,
    [
      f.name,
      f.flavorid,
      f.vcpus,
      f.memoryMb,
      f.rootGb ?? 0,
      f.ephemeralGb ?? 0,
      f.swap ?? 0,
      f.rxtxFactor ?? 1,
      f.isPublic ?? true,
      f.description ?? null,
      specs.map(([k]) => k),
      specs.map(([, v]) => v),
    ],
  );
  const id = r.rows[0]?.id;
  if (id === undefined) throw await flavorExists(db, f);
  const created = await db.query<Row>(`${SELECT} WHERE f.id = $1`, [id]);
  if (created.rows[0] === undefined) throw new ApiDbError('api_db.flavor.race', `flavor ${f.flavorid} vanished during create`);
  return toFlavor(created.rows[0]);
}

/** The flavor with this API id (`flavorid`, what `flavorRef` names), or undefined. Read-only. */
export async function getFlavorByFlavorId(db: Queryable, flavorid: string): Promise<Flavor | undefined> {
  const r = await db.query<Row>(`${SELECT} WHERE f.flavorid = $1`, [flavorid]);
  return r.rows[0] === undefined ? undefined : toFlavor(r.rows[0]);
}

/**
 * The channel on which every committed write of flavors, their extra specs, their access lists or
 * images is notified (migration 005; payload: the table's name). What {@link getFlavorAndImage} answered
 * may be kept until the next notification.
 */
export const CATALOGUE_CHANNEL = 'cellsched_catalogue';

const IMAGE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * {@link getFlavorByFlavorId} and `getImage` in one round trip (what a server create resolves
 * first); each undefined when not found (an image id that is not a uuid is never found), with the
 * projects given access to the flavor (`flavorAccess`, in the order granted; a private flavor is
 * usable by those and the admin only). Read-only.
 */
export async function getFlavorAndImage(
  db: Queryable,
  flavorid: string,
  imageId: string,
): Promise<{ flavor: Flavor | undefined; flavorAccess: readonly string[]; image: Image | undefined }> {
  const r = await db.query<Partial<Row> & Record<string, unknown>>(
    `SELECT fl.*, im.* FROM (SELECT 1) one
     LEFT JOIN (SELECT x.*, coalesce((SELECT array_agg(p.project_id ORDER BY p.id) FROM flavor_projects p WHERE p.flavor_id = x.id), '{}') AS flavor_access
       FROM (${SELECT} WHERE f.flavorid = $1) x) fl ON true
     LEFT JOIN (SELECT ${IMAGE_COLUMNS_PREFIXED} FROM images WHERE id = $2::uuid) im ON true`,
    [flavorid, IMAGE_ID.test(imageId) ? imageId : null],
  );
  const row = r.rows[0] ?? {};
  const image = Object.fromEntries(
    Object.entries(row)
      .filter(([k]) => k.startsWith('image_'))
      .map(([k, v]) => [k.slice('image_'.length), v]),
  ) as unknown as ImageRow;
  return {
    flavor: row.id === null || row.id === undefined ? undefined : toFlavor(row as Row),
    flavorAccess: Array.isArray(row.flavor_access) ? (row.flavor_access as string[]) : [],
    image: image.id === null || image.id === undefined ? undefined : toImage(image),
  };
}

/** The flavor with this name, or undefined. Read-only. */
export async function getFlavorByName(db: Queryable, name: string): Promise<Flavor | undefined> {
  const r = await db.query<Row>(`${SELECT} WHERE f.name = $1`, [name]);
  return r.rows[0] === undefined ? undefined : toFlavor(r.rows[0]);
}

/**
 * What {@link listFlavors} returns: `isPublic` true is the public flavors and, with
 * `projectId`, the private ones that project may use; false the private ones only; null every
 * flavor. It defaults to true with a project, null without (Nova's filters for a member, and
 * the admin's `is_public` query parameter).
 */
export interface FlavorFilters {
  projectId?: string;
  isPublic?: boolean | null;
  includeDisabled?: boolean;
  minMemoryMb?: number;
  minRootGb?: number;
  /** Only the flavors after this flavorid in the list's order (Nova's marker; the caller checks it exists). */
  marker?: string;
  limit?: number;
}

/** Flavors ordered by `flavorid` as Nova's API (default sort key `flavorid`), filtered as {@link FlavorFilters}. Read-only. */
export async function listFlavors(db: Queryable, opts: FlavorFilters = {}): Promise<Flavor[]> {
  const isPublic = opts.isPublic === undefined ? (opts.projectId === undefined ? null : true) : opts.isPublic;
  const r = await db.query<Row>(
    `${SELECT} WHERE ($1::boolean IS NULL OR f.is_public = $1
       OR ($1 AND EXISTS (SELECT 1 FROM flavor_projects p WHERE p.flavor_id = f.id AND p.project_id = $2)))
       AND ($3 OR NOT f.disabled) AND f.memory_mb >= $4 AND f.root_gb >= $5
       AND ($6::text IS NULL OR (f.flavorid, f.id) > (SELECT m.flavorid, m.id FROM flavors m WHERE m.flavorid = $6))
     ORDER BY f.flavorid, f.id LIMIT $7`,
    [
      isPublic,
      opts.projectId ?? null,
      opts.includeDisabled ?? false,
      opts.minMemoryMb ?? 0,
      opts.minRootGb ?? 0,
      opts.marker ?? null,
      opts.limit ?? null,
    ],
  );
  return r.rows.map(toFlavor);
}

/** Sets a flavor's description (Nova's flavor update, 2.55). Returns the flavor, or undefined if there is none. */
export async function setFlavorDescription(db: Queryable, flavorid: string, description: string | null): Promise<Flavor | undefined> {
  await db.query('UPDATE flavors SET description = $2, updated_at = now() WHERE flavorid = $1', [flavorid, description]);
  return getFlavorByFlavorId(db, flavorid);
}

/**
 * Adds or replaces extra specs of a flavor (Nova's flavor-key set). Idempotent. Returns
 * false if the flavor does not exist.
 */
export async function setFlavorExtraSpecs(db: Queryable, flavorid: string, specs: Readonly<Record<string, string>>): Promise<boolean> {
  const entries = Object.entries(specs);
  const r = await db.query<{ id: number }>(
    `WITH f AS (SELECT id FROM flavors WHERE flavorid = $1),
     s AS (INSERT INTO flavor_extra_specs (flavor_id, key, value) SELECT f.id, k, v FROM f, unnest($2::text[], $3::text[]) AS e(k, v)
       ON CONFLICT (flavor_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now())
     SELECT id FROM f`,
    [flavorid, entries.map(([k]) => k), entries.map(([, v]) => v)],
  );
  return r.rows.length > 0;
}

/** Removes one extra spec. Idempotent: returns whether it existed. */
export async function deleteFlavorExtraSpec(db: Queryable, flavorid: string, key: string): Promise<boolean> {
  const r = await db.query('DELETE FROM flavor_extra_specs s USING flavors f WHERE s.flavor_id = f.id AND f.flavorid = $1 AND s.key = $2', [
    flavorid,
    key,
  ]);
  return (r.rowCount ?? 0) > 0;
}

/**
 * Grants a project access to a flavor: `added`, `exists` (Nova's FlavorAccessExists; nothing
 * written) or `not_found` (no such flavor). Safe to retry: a second call answers `exists`.
 */
export async function addFlavorAccess(db: Queryable, flavorid: string, projectId: string): Promise<'added' | 'exists' | 'not_found'> {
  const r = await db.query<{ added: boolean }>(
    `WITH f AS (SELECT id FROM flavors WHERE flavorid = $1),
     p AS (INSERT INTO flavor_projects (flavor_id, project_id) SELECT id, $2 FROM f ON CONFLICT DO NOTHING RETURNING id)
     SELECT EXISTS (SELECT 1 FROM p) AS added FROM f`,
    [flavorid, projectId],
  );
  const row = r.rows[0];
  return row === undefined ? 'not_found' : row.added ? 'added' : 'exists';
}

/** Withdraws a project's access to a flavor. Idempotent: returns whether it had access. */
export async function removeFlavorAccess(db: Queryable, flavorid: string, projectId: string): Promise<boolean> {
  const r = await db.query(
    'DELETE FROM flavor_projects p USING flavors f WHERE p.flavor_id = f.id AND f.flavorid = $1 AND p.project_id = $2',
    [flavorid, projectId],
  );
  return (r.rowCount ?? 0) > 0;
}

/** The projects with access to a flavor, in the order access was granted. Read-only. */
export async function listFlavorAccess(db: Queryable, flavorid: string): Promise<string[]> {
  const r = await db.query<{ project_id: string }>(
    'SELECT p.project_id FROM flavor_projects p JOIN flavors f ON f.id = p.flavor_id WHERE f.flavorid = $1 ORDER BY p.id',
    [flavorid],
  );
  return r.rows.map((x) => x.project_id);
}

/** Deletes a flavor and its extra specs (instances keep their embedded copy). Idempotent: returns whether it existed. */
export async function deleteFlavor(db: Queryable, flavorid: string): Promise<boolean> {
  const r = await db.query('DELETE FROM flavors WHERE flavorid = $1', [flavorid]);
  return (r.rowCount ?? 0) > 0;
}
