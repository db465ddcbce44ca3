import {
  actionObject,
  booleanParam,
  enumParam,
  isObj,
  nameParam,
  onlyKeys,
  repr,
  required,
  stringParam,
  typeError,
  type Obj,
} from './action-schema';
import { badRequest } from './errors';
import { atLeast, type Microversion } from './microversion';
import { isBase64, isIpAddress, isPrintable, METADATA_KEY, UUID } from './nova-formats';
import { invalidInput } from './server-create-errors';
import type { ParsedServerAction } from './server-action';

/** The `rebuild` keys Nova's schema knows at `v` (rebuild, _v219, _v254, _v257, _v263; 2.90's hostname is beyond the max). Pure. */
export function rebuildKeys(v: Microversion): string[] {
  const keys = ['name', 'imageRef', 'adminPass', 'metadata', 'preserve_ephemeral', 'OS-DCF:diskConfig', 'accessIPv4', 'accessIPv6'];
  if (!atLeast(v, 57)) keys.push('personality');
  if (atLeast(v, 19)) keys.push('description');
  if (atLeast(v, 54)) keys.push('key_name');
  if (atLeast(v, 57)) keys.push('user_data');
  if (atLeast(v, 63)) keys.push('trusted_image_certificates');
  return keys;
}

function checkMetadata(v: unknown): void {
  if (!isObj(v)) throw typeError('metadata', v, ['object']);
  for (const [k, value] of Object.entries(v)) {
    if (!METADATA_KEY.test(k)) throw invalidInput('metadata', repr(v), `Additional properties are not allowed ('${k}' was unexpected)`);
    if (typeof value !== 'string') throw typeError(k, value, ['string']);
    if (value.length > 255) throw invalidInput(k, value, `${repr(value)} is too long`);
  }
}

function checkPersonality(v: unknown): void {
  if (!Array.isArray(v)) throw typeError('personality', v, ['array']);
  for (const file of v) {
    if (!isObj(file)) throw typeError('personality', file, ['object']);
    onlyKeys('personality', file, ['path', 'contents']);
    if (file.path !== undefined) stringParam('path', file.path);
    if (file.contents !== undefined && !(typeof file.contents === 'string' && isBase64(file.contents)))
      throw invalidInput('contents', file.contents, `${repr(file.contents)} is not a 'base64'`);
  }
}

/** The optional keys' checks (values Nova stores but this deployment does not use are only validated). */
const CHECKS: Readonly<Record<string, (v: unknown) => void>> = {
  metadata: checkMetadata,
  personality: checkPersonality,
  preserve_ephemeral: (v) => {
    booleanParam('preserve_ephemeral', v);
  },
  'OS-DCF:diskConfig': (v) => {
    enumParam('OS-DCF:diskConfig', v, ['AUTO', 'MANUAL']);
  },
  accessIPv4: (v) => {
    if (typeof v !== 'string' || !/^\d+\.\d+\.\d+\.\d+$/.test(v) || !isIpAddress(v))
      throw invalidInput('accessIPv4', v, `${repr(v)} is not a 'ipv4'`);
  },
  accessIPv6: (v) => {
    if (typeof v !== 'string' || !v.includes(':') || !isIpAddress(v)) throw invalidInput('accessIPv6', v, `${repr(v)} is not a 'ipv6'`);
  },
  description: (v) => {
    if (v !== null && (typeof v !== 'string' || v.length > 255 || !isPrintable(v)))
      throw invalidInput('description', v, 'must be null or at most 255 printable characters');
  },
  key_name: (v) => {
    if (v === null) return;
    if (typeof v !== 'string' || v.length < 1 || v.length > 255)
      throw invalidInput('key_name', v, `${repr(v)} is not valid under any of the given schemas`);
    throw badRequest('Invalid key_name provided.'); // NOTE: there are no key pairs here (as at create)
  },
  user_data: (v) => {
    if (v !== null && (typeof v !== 'string' || v.length > 65535 || !isBase64(v)))
      throw invalidInput('user_data', v, `${repr(v)} is not valid under any of the given schemas`);
  },
  trusted_image_certificates: (v) => {
    if (v !== null)
      throw badRequest(
        'Image certificate validation is not supported by this deployment: trusted_image_certificates must be null or absent.',
      );
  },
};

/**
 * `rebuild`: `imageRef` (a uuid) required; `name`, `adminPass`; the other keys of Nova's schema
 * for the version are validated (metadata, personality < 2.57, description 2.19, key_name 2.54
 * — null only, there are no key pairs —, user_data 2.57, trusted_image_certificates 2.63 — null
 * only). Pure.
 */
export function parseRebuild(body: Obj, v: Microversion): ParsedServerAction {
  const o = actionObject(body, 'rebuild') ?? {};
  onlyKeys('rebuild', o, rebuildKeys(v));
  required('rebuild', o, ['imageRef']);
  if (typeof o.imageRef !== 'string') throw typeError('imageRef', o.imageRef, ['string']);
  if (!UUID.test(o.imageRef)) throw invalidInput('imageRef', o.imageRef, `${repr(o.imageRef)} is not a 'uuid'`);
  const name = o.name === undefined ? undefined : nameParam('name', o.name);
  const adminPass = o.adminPass === undefined ? undefined : stringParam('adminPass', o.adminPass);
  for (const [key, check] of Object.entries(CHECKS)) if (o[key] !== undefined) check(o[key]);
  const userData = atLeast(v, 57) && 'user_data' in o ? (o.user_data as string | null) : undefined;
  return { action: 'rebuild', verb: 'rebuild', imageRef: o.imageRef.toLowerCase(), name, adminPass, userData };
}
