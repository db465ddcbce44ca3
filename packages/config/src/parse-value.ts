import { parseDuration } from './duration';
import type { OptionSpec } from './schema';

/** The outcome of parsing one raw value: a typed value or a reason it was refused. */
export type Parsed = { ok: true; value: unknown } | { ok: false; reason: string };

const ok = (value: unknown): Parsed => ({ ok: true, value });
const bad = (reason: string): Parsed => ({ ok: false, reason });
const show = (raw: unknown): string => JSON.stringify(raw) ?? String(raw);

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);
const INT_TEXT = /^[+-]?\d+$/;
const FLOAT_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function inRange(n: number, min: number | undefined, max: number | undefined, shown: string): Parsed {
  if (min !== undefined && n < min) return bad(`${shown} is below the minimum ${min}`);
  if (max !== undefined && n > max) return bad(`${shown} is above the maximum ${max}`);
  return ok(n);
}

function parseInt_(raw: unknown, min?: number, max?: number): Parsed {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && INT_TEXT.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) return bad(`${show(raw)} is not an integer`);
  return inRange(n, min, max, show(raw));
}

function parseFloat_(raw: unknown, min?: number, max?: number): Parsed {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && FLOAT_TEXT.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isFinite(n)) return bad(`${show(raw)} is not a number`);
  return inRange(n, min, max, show(raw));
}

function parseBool(raw: unknown): Parsed {
  if (typeof raw === 'boolean') return ok(raw);
  const t = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (TRUE.has(t)) return ok(true);
  if (FALSE.has(t)) return ok(false);
  return bad(`${show(raw)} is not a boolean (true/false, 1/0, yes/no, on/off)`);
}

function parseUrl(raw: unknown, protocols?: readonly string[]): Parsed {
  if (typeof raw !== 'string' || !URL.canParse(raw)) return bad(`${show(raw)} is not a valid URL`);
  const protocol = new URL(raw).protocol;
  if (protocols && !protocols.includes(protocol)) {
    return bad(`URL scheme ${show(protocol)} is not one of ${protocols.join(', ')}`);
  }
  return ok(raw);
}

function parseList(raw: unknown): Parsed {
  if (Array.isArray(raw)) {
    return raw.every((x) => typeof x === 'string') ? ok([...raw]) : bad(`${show(raw)} is not a list of strings`);
  }
  if (typeof raw !== 'string') return bad(`${show(raw)} is not a list (comma-separated text or a JSON array)`);
  return ok(
    raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}

function parseDurationValue(raw: unknown, min?: string, max?: string): Parsed {
  const ms = typeof raw === 'string' ? parseDuration(raw) : undefined;
  if (ms === undefined) return bad(`${show(raw)} is not a duration (e.g. "30s", "500ms", "1m30s")`);
  return inRange(ms, min === undefined ? undefined : parseDuration(min), max === undefined ? undefined : parseDuration(max), show(raw));
}

/**
 * Parses `raw` (text from env/argv, or a JSON value from the config file) as `spec`
 * says. Pure: never throws for bad input, returns the reason instead.
 */
export function parseValue(spec: OptionSpec, raw: unknown): Parsed {
  switch (spec.type) {
    case 'string':
      return typeof raw === 'string' ? ok(raw) : bad(`${show(raw)} is not a string`);
    case 'int':
      return parseInt_(raw, spec.min, spec.max);
    case 'float':
      return parseFloat_(raw, spec.min, spec.max);
    case 'bool':
      return parseBool(raw);
    case 'url':
      return parseUrl(raw, spec.protocols);
    case 'enum':
      return typeof raw === 'string' && spec.values.includes(raw) ? ok(raw) : bad(`${show(raw)} is not one of ${spec.values.join(', ')}`);
    case 'list':
      return parseList(raw);
    case 'duration':
      return parseDurationValue(raw, spec.min, spec.max);
    default:
      return bad(`unknown option type ${show((spec as { type?: unknown }).type)}`);
  }
}
