import { ConfigError } from './config-error';
import { deepFreeze } from './deep-freeze';
import { parseValue } from './parse-value';
import type { Config, ConfigSchema } from './schema';
import { checkSchema } from './schema-check';
import { readArgvSource, readEnvSource, readFileSource, type RawValue, type RawValues } from './sources';

/** Env var naming the JSON config file when `LoadOptions.file` is not given. */
export const CONFIG_FILE_ENV = 'CELLSCHED_CONFIG_FILE';

export interface LoadOptions {
  /** Defaults to `process.env`. Pass an object in tests. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** JSON file keyed by option name; defaults to env `CELLSCHED_CONFIG_FILE`; `false` reads no file. */
  readonly file?: string | false;
  /** Command-line arguments (e.g. `process.argv.slice(2)`); none are read unless given. */
  readonly argv?: readonly string[];
  /** Ignore file keys that are not options of this schema (a file shared by several services). */
  readonly allowUnknownFileKeys?: boolean;
}

/**
 * Loads a configuration: defaults, then the JSON file, then env, then argv (each later
 * source wins). Validates everything and returns a deep-frozen object typed from the
 * schema. Throws one `ConfigError` (code `config.invalid`) listing every problem: schema
 * mistakes, unreadable file, unknown keys/flags, missing required options, bad values.
 * Pure apart from reading the env object and the file.
 */
export function loadConfig<const S extends ConfigSchema>(schema: S, opts: LoadOptions = {}): Config<S> {
  const problems = checkSchema(schema);
  if (problems.length > 0) throw new ConfigError(problems);
  const env = opts.env ?? process.env;
  const filePath = opts.file === false ? undefined : (opts.file ?? env[CONFIG_FILE_ENV]);
  const layers: RawValues[] = [];
  if (filePath !== undefined && filePath !== '') {
    layers.push(readFileSource(schema, filePath, problems, opts.allowUnknownFileKeys ?? false));
  }
  layers.push(readEnvSource(schema, env));
  if (opts.argv) layers.push(readArgvSource(schema, opts.argv, problems));
  const result: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) {
    let given: RawValue | undefined;
    for (const layer of layers) given = layer.get(name) ?? given;
    if (given === undefined) {
      if (spec.required) problems.push(`${name}: required, set env ${spec.env}`);
      else result[name] = spec.default === undefined ? undefined : (parseValue(spec, spec.default) as { value: unknown }).value;
      continue;
    }
    const parsed = parseValue(spec, given.raw);
    if (parsed.ok) result[name] = parsed.value;
    else problems.push(`${name} (${given.source}): ${parsed.reason}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(result) as Config<S>;
}
