import { readFileSync } from 'node:fs';
import type { ConfigSchema } from './schema';

/** Where a raw value came from, for error messages (`env CELLSCHED_X`, `file a.json`, `--x`). */
export interface RawValue {
  readonly raw: unknown;
  readonly source: string;
}
export type RawValues = Map<string, RawValue>;

/** Reads a JSON object keyed by option name; problems go to `problems`, unknown keys too unless allowed. */
export function readFileSource(schema: ConfigSchema, path: string, problems: string[], allowUnknown: boolean): RawValues {
  const out: RawValues = new Map();
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    problems.push(`config file ${path}: ${(err as Error).message}`);
    return out;
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    problems.push(`config file ${path}: must hold a JSON object keyed by option name`);
    return out;
  }
  for (const [key, raw] of Object.entries(data)) {
    if (Object.hasOwn(schema, key)) out.set(key, { raw, source: `file ${path}` });
    else if (!allowUnknown) problems.push(`config file ${path}: unknown option ${JSON.stringify(key)}`);
  }
  return out;
}

/** Reads each option's env var; an empty string counts as unset (compose's `X=${X:-}` idiom). */
export function readEnvSource(schema: ConfigSchema, env: Readonly<Record<string, string | undefined>>): RawValues {
  const out: RawValues = new Map();
  for (const [name, spec] of Object.entries(schema)) {
    const raw = env[spec.env];
    if (raw !== undefined && raw !== '') out.set(name, { raw, source: `env ${spec.env}` });
  }
  return out;
}

/** `--kebab-name=value`, `--kebab-name value`; for bools also `--flag` and `--no-flag`. */
export const flagOf = (name: string): string => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

export function readArgvSource(schema: ConfigSchema, argv: readonly string[], problems: string[]): RawValues {
  const out: RawValues = new Map();
  const byFlag = new Map(Object.keys(schema).map((name) => [flagOf(name), name]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const negated = flag.startsWith('--no-') ? byFlag.get(`--${flag.slice(5)}`) : undefined;
    const name = byFlag.get(flag) ?? negated;
    if (name === undefined) {
      problems.push(`argument ${JSON.stringify(arg)}: unknown option`);
      continue;
    }
    const isBool = schema[name]?.type === 'bool';
    if (negated !== undefined && byFlag.get(flag) === undefined) {
      if (isBool && eq < 0) out.set(name, { raw: 'false', source: flag });
      else problems.push(`argument ${JSON.stringify(arg)}: --no- applies to boolean options only`);
    } else if (eq >= 0) out.set(name, { raw: arg.slice(eq + 1), source: flag });
    else if (isBool) out.set(name, { raw: 'true', source: flag });
    else if (i + 1 < argv.length) out.set(name, { raw: argv[++i], source: flag });
    else problems.push(`argument ${flag}: missing value`);
  }
  return out;
}

/** True when argv asks for help (`--help` or `-h`): print `renderHelp(schema)` instead of loading. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}
