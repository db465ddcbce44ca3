import { badRequest } from './errors';
import { atLeast, type Microversion } from './microversion';
import { invalidInput, notOfType } from './server-create-errors';

// `block_device_mapping_v2` of a create as Nova's schema judges it. There is no block storage
// service in this deployment, so a mapping that passes the schema is still refused (400): only
// an absent or empty list boots (from `imageRef`, the only way to boot here).

/** Keys of a `block_device_mapping_v2` item Nova's schema knows at 2.1 (legacy keys + the v2 ones). */
const ITEM_KEYS = [
  'virtual_name',
  'volume_id',
  'snapshot_id',
  'volume_size',
  'device_name',
  'delete_on_termination',
  'no_device',
  'connection_info',
  'source_type',
  'uuid',
  'image_id',
  'destination_type',
  'guest_format',
  'device_type',
  'disk_bus',
  'boot_index',
];

/** The item keys at `version`: `tag` at 2.32 and from 2.42 (Nova's schema lost it in 2.33-2.41), `volume_type` from 2.67. Pure. */
export function bdmItemKeys(version: Microversion): readonly string[] {
  const tag = version.major === 2 && version.minor === 32 ? true : atLeast(version, 42);
  return [...ITEM_KEYS, ...(tag ? ['tag'] : []), ...(atLeast(version, 67) ? ['volume_type'] : [])];
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function checkItem(item: unknown, index: number, known: readonly string[]): void {
  if (!isObj(item)) throw notOfType(String(index), item, 'object');
  const extra = Object.keys(item).filter((k) => !known.includes(k));
  if (extra.length > 0) {
    throw invalidInput(
      String(index),
      item,
      `Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
    );
  }
  const vt = item.volume_type;
  if (vt !== undefined && vt !== null) {
    if (typeof vt !== 'string') throw notOfType('volume_type', vt, 'string', 'null');
    if (vt.length > 255) throw invalidInput('volume_type', vt, `'${vt}' is too long`);
  }
  for (const k of ['source_type', 'destination_type'] as const) {
    const allowed = k === 'source_type' ? ['volume', 'image', 'snapshot', 'blank'] : ['local', 'volume'];
    const v = item[k];
    if (v !== undefined && (typeof v !== 'string' || !allowed.includes(v))) {
      throw invalidInput(k, v, `${JSON.stringify(v)} is not one of [${allowed.map((a) => `'${a}'`).join(', ')}]`);
    }
  }
}

/**
 * Nova's `block_device_mapping_v2` schema for `version` (an array of objects with the version's
 * keys: `volume_type` is an unknown key before 2.67), then this deployment's refusal of any
 * mapping: there are no volumes to attach or create. Pure.
 */
export function checkBlockDeviceMappings(v: unknown, version: Microversion): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) throw notOfType('block_device_mapping_v2', v, 'array');
  const known = bdmItemKeys(version);
  v.forEach((item, i) => checkItem(item, i, known));
  if (v.length > 0) {
    throw badRequest(
      'Block device mappings are not supported by this deployment (there is no block storage service): ' +
        'block_device_mapping_v2 must be empty or absent; servers boot from imageRef.',
    );
  }
}
