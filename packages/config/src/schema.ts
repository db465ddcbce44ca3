/**
 * Option declarations: a service's configuration is plain data (name, env var, type,
 * default, help), from which `loadConfig` derives parsing, validation, help text and
 * the TypeScript type of the result.
 */

/** Every option type `loadConfig` understands. */
export const OPTION_TYPES = ['string', 'int', 'float', 'bool', 'url', 'enum', 'list', 'duration'] as const;
export type OptionType = (typeof OPTION_TYPES)[number];

interface OptionBase {
  /** Environment variable, e.g. `CELLSCHED_PLACEMENT_DB_URL` (upper snake case). */
  readonly env: string;
  /** One or two sentences shown by `renderHelp`. */
  readonly help: string;
  /** A required option has no default; leaving it unset is an error. */
  readonly required?: boolean;
  /** Never show the value (or the default) in help or logs. */
  readonly secret?: boolean;
}

export interface StringOption extends OptionBase {
  readonly type: 'string';
  readonly default?: string;
}
export interface IntOption extends OptionBase {
  readonly type: 'int';
  readonly default?: number;
  readonly min?: number;
  readonly max?: number;
}
export interface FloatOption extends OptionBase {
  readonly type: 'float';
  readonly default?: number;
  readonly min?: number;
  readonly max?: number;
}
export interface BoolOption extends OptionBase {
  readonly type: 'bool';
  readonly default?: boolean;
}
/** A URL; `protocols` (e.g. `['postgres:', 'postgresql:']`) restricts the scheme. The value is kept as written. */
export interface UrlOption extends OptionBase {
  readonly type: 'url';
  readonly default?: string;
  readonly protocols?: readonly string[];
}
export interface EnumOption extends OptionBase {
  readonly type: 'enum';
  readonly values: readonly string[];
  readonly default?: string;
}
/** Comma-separated in env and argv, a JSON array of strings in the file. */
export interface ListOption extends OptionBase {
  readonly type: 'list';
  readonly default?: readonly string[];
}
/** `"30s"`, `"500ms"`, `"1m30s"` (units ms, s, m, h, d); the loaded value is milliseconds. */
export interface DurationOption extends OptionBase {
  readonly type: 'duration';
  readonly default?: string;
  readonly min?: string;
  readonly max?: string;
}

export type OptionSpec = StringOption | IntOption | FloatOption | BoolOption | UrlOption | EnumOption | ListOption | DurationOption;

/** A service's options, keyed by option name (camelCase; `--kebab-case` on the command line). */
export type ConfigSchema = { readonly [name: string]: OptionSpec };

type BaseValue<O> = O extends { type: 'string' | 'url' }
  ? string
  : O extends { type: 'int' | 'float' | 'duration' }
    ? number
    : O extends { type: 'bool' }
      ? boolean
      : O extends { type: 'enum'; values: readonly (infer V)[] }
        ? V
        : O extends { type: 'list' }
          ? readonly string[]
          : never;

type AlwaysSet<O> = O extends { required: true } ? true : O extends { default: unknown } ? true : false;

/** The loaded type of one option: `undefined` only when it is optional and has no default. */
export type OptionValue<O> = AlwaysSet<O> extends true ? BaseValue<O> : BaseValue<O> | undefined;

/** The deep-frozen object `loadConfig` returns for schema `S`. */
export type Config<S extends ConfigSchema> = { readonly [K in keyof S]: OptionValue<S[K]> };

/**
 * Declares a schema. Returns its argument unchanged; the `const` type parameter keeps
 * literal types (enum values, `required: true`) so `Config<typeof schema>` is precise.
 */
export function defineConfig<const S extends ConfigSchema>(schema: S): S {
  return schema;
}
