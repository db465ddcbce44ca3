import { invalidInput } from './server-create-errors';
import { isIpAddress, UUID } from './nova-formats';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Scheduler hints Nova's schema knows, and what each must be (others may be any string or list of strings). */
const KNOWN: Readonly<Record<string, (v: unknown) => boolean>> = {
  group: (v) => isUuid(v) || (Array.isArray(v) && v.length === 1 && v.every(isUuid)),
  different_host: (v) => isUuid(v) || (Array.isArray(v) && v.every(isUuid)),
  same_host: (v) => typeof v === 'string' || (Array.isArray(v) && v.every(isUuid)),
  different_cell: (v) => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string')),
  build_near_host_ip: (v) => typeof v === 'string' && isIpAddress(v),
  cidr: (v) => typeof v === 'string' && /^\/[0-9a-f.:]+$/.test(v),
};
const isUuid = (v: unknown): boolean => typeof v === 'string' && UUID.test(v);

function hintsUnder(key: string, raw: unknown): Record<string, string> {
  if (!isObj(raw)) throw invalidInput(key, raw, `${JSON.stringify(raw)} is not of type 'object'`);
  const hints: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    const check = Object.hasOwn(KNOWN, k) ? KNOWN[k] : undefined;
    if (check !== undefined && !check(v))
      throw invalidInput(`${key}.${k}`, v, `${JSON.stringify(v)} is not valid under any of the given schemas`);
    if (typeof v === 'string') hints[k] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) hints[k] = v.join(',');
    else throw invalidInput(`${key}.${k}`, v, `${JSON.stringify(v)} is not of type 'string', 'array'`);
  }
  return hints;
}

/**
 * The hints of a create body, values flattened to strings: `os:scheduler_hints`, else the
 * legacy `OS-SCH-HNT:scheduler_hints` (both are judged when both are given, as Nova's schema does). Pure.
 */
export function hintsOf(body: Obj): { hints: Record<string, string>; group: string | undefined } {
  const given = ['os:scheduler_hints', 'OS-SCH-HNT:scheduler_hints']
    .filter((k) => body[k] !== undefined)
    .map((k) => hintsUnder(k, body[k]));
  const hints = given[0] ?? {};
  return { hints, group: hints.group?.toLowerCase() };
}
