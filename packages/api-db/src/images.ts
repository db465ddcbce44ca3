import { randomUUID } from 'node:crypto';
import type { ImageMeta } from '@cellsched/wire';
import { ApiDbError, checkUuid, type Queryable } from './db';

/** Nova's fake Glance image id (nova/tests/fixtures/glance.py image1), seeded by the first migration. */
export const DEFAULT_IMAGE_ID = '155d900f-4e14-4e4c-a73d-069cbf4541e6';

/** An image of the Glance stand-in catalogue. */
export interface Image {
  readonly id: string;
  readonly name: string | null;
  readonly status: string;
  readonly visibility: string;
  readonly owner: string | null;
  readonly containerFormat: string | null;
  readonly diskFormat: string | null;
  readonly minDisk: number;
  readonly minRam: number;
  readonly size: number | null;
  readonly properties: Readonly<Record<string, string>>;
  readonly createdAt: Date;
}

/** @internal */
export interface ImageRow {
  id: string;
  name: string | null;
  status: string;
  visibility: string;
  owner: string | null;
  container_format: string | null;
  disk_format: string | null;
  min_disk: number;
  min_ram: number;
  size: string | null;
  properties: Record<string, string>;
  created_at: Date;
}
type Row = ImageRow;
/** @internal */
export const toImage = (r: Row): Image => ({
  id: r.id,
  name: r.name,
  status: r.status,
  visibility: r.visibility,
  owner: r.owner,
  containerFormat: r.container_format,
  diskFormat: r.disk_format,
  minDisk: r.min_disk,
  minRam: r.min_ram,
  size: r.size === null ? null : Number(r.size),
  properties: r.properties,
  createdAt: r.created_at,
});
const COLUMNS = 'id, name, status, visibility, owner, container_format, disk_format, min_disk, min_ram, size, properties, created_at';
/** @internal the image columns, each prefixed `image_` (to read beside another table's). */
export const IMAGE_COLUMNS_PREFIXED = COLUMNS.split(', ')
  .map((c) => `${c} AS image_${c}`)
  .join(', ');

/** The wire ImageMeta a RequestSpec carries. Pure. */
export function toImageMeta(i: Image): ImageMeta {
  return { id: i.id, name: i.name ?? '', diskFormat: i.diskFormat ?? '', sizeBytes: i.size ?? 0, properties: { ...i.properties } };
}

export interface NewImage {
  id?: string;
  name: string;
  containerFormat?: string;
  diskFormat?: string;
  minDisk?: number;
  minRam?: number;
  size?: number;
  visibility?: 'public' | 'private' | 'shared' | 'community';
  owner?: string;
  properties?: Readonly<Record<string, string>>;
}

function validate(i: NewImage): void {
  const problems: string[] = [];
  for (const [what, v] of [
    ['min_disk', i.minDisk],
    ['min_ram', i.minRam],
    ['size', i.size],
  ] as const) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0)) problems.push(`${what} must be a non-negative integer`);
  }
  if (Object.values(i.properties ?? {}).some((v) => typeof v !== 'string')) problems.push('property values must be strings');
  if (problems.length > 0) throw new ApiDbError('api_db.image.invalid', `invalid image: ${problems.join('; ')}`);
}

/**
 * Adds an image. Idempotent per id: an existing id changes nothing and `created` is false.
 * Bad values throw `api_db.image.invalid`.
 */
export async function createImage(db: Queryable, i: NewImage): Promise<{ image: Image; created: boolean }> {
  validate(i);
  const id = checkUuid(i.id ?? randomUUID(), 'image id');
  const r = await db.query(
    `INSERT INTO images (id, name, container_format, disk_format, min_disk, min_ram, size, visibility, owner, properties)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
    [
      id,
      i.name,
      i.containerFormat ?? 'bare',
      i.diskFormat ?? 'raw',
      i.minDisk ?? 0,
      i.minRam ?? 0,
      i.size ?? null,
      i.visibility ?? 'public',
      i.owner ?? null,
      JSON.stringify(i.properties ?? {}),
    ],
  );
  const image = await getImage(db, id);
  if (image === undefined) throw new ApiDbError('api_db.image.race', `image ${id} vanished during create`);
  return { image, created: (r.rowCount ?? 0) > 0 };
}

/**
 * The image, or undefined (the API answers Nova's 400 "Can not find requested image").
 * A malformed id is also undefined, not an error, since any imageRef string may arrive. Read-only.
 */
export async function getImage(db: Queryable, id: string): Promise<Image | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM images WHERE id = $1`, [id]);
  return r.rows[0] === undefined ? undefined : toImage(r.rows[0]);
}

/** Every image, by name then id. Read-only. */
export async function listImages(db: Queryable): Promise<Image[]> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM images ORDER BY name NULLS LAST, id`);
  return r.rows.map(toImage);
}

/** Deletes an image. Idempotent: returns whether it existed. */
export async function deleteImage(db: Queryable, id: string): Promise<boolean> {
  const r = await db.query('DELETE FROM images WHERE id = $1', [checkUuid(id, 'image id')]);
  return (r.rowCount ?? 0) > 0;
}
