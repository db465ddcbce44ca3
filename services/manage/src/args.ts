/** A command line split into positionals and `--options` (pure). */
export interface ParsedArgs {
  readonly positionals: readonly string[];
  /** Option name (dashes normalized to `_`) -> values in order; a bare flag is `'true'`. */
  readonly options: ReadonlyMap<string, readonly string[]>;
}

/** Raised for a command line that cannot be understood; the CLI prints it with usage and exits 2 (argparse's code). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const normalize = (name: string): string => name.replace(/-/g, '_');

/**
 * Parses `--name value`, `--name=value` and boolean `--flag`s (those listed in `flags`).
 * `--transport-url` and `--transport_url` are the same option (Nova mixes both spellings).
 * Throws {@link UsageError} for an option missing its value or, when `options` is given,
 * for an option that is neither a flag nor listed there.
 */
export function parseArgs(argv: readonly string[], flags: readonly string[] = [], options_?: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const options = new Map<string, string[]>();
  const add = (name: string, value: string): void => {
    options.set(name, [...(options.get(name) ?? []), value]);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = normalize(arg.slice(2, eq === -1 ? undefined : eq));
    if (options_ !== undefined && ![...flags, ...options_].map(normalize).includes(name))
      throw new UsageError(`unrecognized arguments: ${arg}`);
    if (eq !== -1) add(name, arg.slice(eq + 1));
    else if (flags.map(normalize).includes(name)) add(name, 'true');
    else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`argument --${name}: expected one argument`);
      add(name, value);
      i++;
    }
  }
  return { positionals, options };
}

/** The last value of an option, or undefined. */
export function option(args: ParsedArgs, name: string): string | undefined {
  return args.options.get(normalize(name))?.at(-1);
}

/** Whether a boolean flag was given. */
export function flag(args: ParsedArgs, name: string): boolean {
  return option(args, name) === 'true';
}

/** A non-negative integer option, or `dflt`; throws {@link UsageError} for anything else. */
export function intOption(args: ParsedArgs, name: string, dflt: number): number {
  const raw = option(args, name);
  if (raw === undefined) return dflt;
  if (!/^\d+$/.test(raw)) throw new UsageError(`argument --${name}: invalid int value: '${raw}'`);
  return Number(raw);
}

/** `key=value` options (e.g. repeated `--property`), as a record; throws {@link UsageError} for a malformed one. */
export function keyValues(args: ParsedArgs, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of args.options.get(normalize(name)) ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`argument --${name}: expected key=value, got '${kv}'`);
    out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}
