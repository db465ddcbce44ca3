import { badRequest } from './errors';
import { atLeast, type Microversion } from './microversion';
import { invalidName, isBase64, isNovaBoolean, isNovaName, isPrintable, METADATA_KEY } from './nova-formats';
import { invalidInput, notOfType } from './server-create-errors';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `server` keys Nova's create schema knows (at 2.1) that this deployment reads or accepts. */
const BASE_KEYS = [
  'name',
  'imageRef',
  'flavorRef',
  'availability_zone',
  'min_count',
  'max_count',
  'return_reservation_id',
  'networks',
  'metadata',
  'security_groups',
  'key_name',
  'user_data',
  'config_drive',
  'adminPass',
  'OS-DCF:diskConfig',
  'block_device_mapping_v2',
];

/** The `server` keys of a create at `version` (2.19 `description`, 2.63 `trusted_image_certificates`). Pure. */
export function serverKeys(version: Microversion): readonly string[] {
  return [...BASE_KEYS, ...(atLeast(version, 19) ? ['description'] : []), ...(atLeast(version, 63) ? ['trusted_image_certificates'] : [])];
}

function checkMetadata(v: unknown): void {
  if (!isObj(v)) throw notOfType('metadata', v, 'object');
  for (const [k, value] of Object.entries(v)) {
    if (!METADATA_KEY.test(k)) throw invalidInput('metadata', v, `Additional properties are not allowed ('${k}' was unexpected)`);
    if (typeof value !== 'string') throw notOfType(k, value, 'string');
    if (value.length > 255) throw invalidInput(k, value, `'${value}' is too long`);
  }
}

function checkSecurityGroups(v: unknown): void {
  if (!Array.isArray(v)) throw notOfType('security_groups', v, 'array');
  for (const sg of v) {
    if (!isObj(sg)) throw notOfType('security_groups', sg, 'object');
    const extra = Object.keys(sg).filter((k) => k !== 'name');
    if (extra.length > 0)
      throw invalidInput('security_groups', sg, `Additional properties are not allowed ('${extra[0] ?? ''}' was unexpected)`);
    if (sg.name === undefined) continue;
    if (typeof sg.name !== 'string') throw notOfType('name', sg.name, 'string');
    if (sg.name.length < 1 || sg.name.length > 255 || !isNovaName(sg.name)) throw invalidName();
    // NOTE: there is no Neutron: "default" is the only security group there is.
    if (sg.name !== 'default') throw badRequest(`Security group ${sg.name} not found.`);
  }
}

/** Each optional `server` field Nova validates, and how; the values are accepted and not used further. */
const CHECKS: Readonly<Record<string, (v: unknown) => void>> = {
  metadata: checkMetadata,
  security_groups: checkSecurityGroups,
  key_name: (v) => {
    if (typeof v !== 'string') throw notOfType('key_name', v, 'string');
    if (v.length < 1 || v.length > 255 || !isNovaName(v)) throw invalidName();
    throw badRequest('Invalid key_name provided.'); // NOTE: there are no key pairs here
  },
  user_data: (v) => {
    if (typeof v !== 'string') throw notOfType('user_data', v, 'string');
    if (v.length > 65535) throw invalidInput('user_data', v, 'is too long');
    if (!isBase64(v)) throw invalidInput('user_data', v, `'${v}' is not a 'base64'`);
  },
  config_drive: (v) => {
    if (!isNovaBoolean(v)) throw invalidInput('config_drive', v, `${JSON.stringify(v)} is not one of the allowed boolean values`);
  },
  adminPass: (v) => {
    if (typeof v !== 'string') throw notOfType('adminPass', v, 'string');
  },
  'OS-DCF:diskConfig': (v) => {
    if (v !== 'AUTO' && v !== 'MANUAL') throw invalidInput('OS-DCF:diskConfig', v, `${JSON.stringify(v)} is not one of ['AUTO', 'MANUAL']`);
  },
  description: (v) => {
    if (v === null) return;
    if (typeof v !== 'string') throw notOfType('description', v, 'string', 'null');
    if (v.length > 255 || !isPrintable(v)) throw invalidInput('description', v, 'must be at most 255 printable characters');
  },
  trusted_image_certificates: (v) => {
    if (v !== null)
      throw badRequest(
        'Image certificate validation is not supported by this deployment: trusted_image_certificates must be null or absent.',
      );
  },
};

/** Validates the optional `server` fields as Nova's schema does (values not used here). Pure. */
export function checkServerOptions(server: Obj): void {
  for (const [key, check] of Object.entries(CHECKS)) if (server[key] !== undefined) check(server[key]);
}
