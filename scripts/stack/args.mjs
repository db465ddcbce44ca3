// `pnpm stack` arguments: the command, its flags, and the system options (`--cells` ...) that
// `up` and `compose` take (the keys of deploy/launcher/system.mjs SYSTEM_DEFAULTS).

/** Numeric system options: flag -> [option, min, max] (integers but the failure rate). */
const NUMERIC = {
  '--cells': ['cells', 1, 50],
  '--hosts-per-cell': ['hostsPerCell', 1, 5000],
  '--schedulers': ['schedulers', 1, 20],
  '--build-failure-rate': ['buildFailureRate', 0, 1],
  '--port-offset': ['portOffset', 0, 50000],
  '--build-latency-ms': ['buildLatencyMs', 0, 600000],
};

/** `argv` (after `stack.mjs`) as options; throws on an unknown flag or a value out of range. `env`: CELLSCHED_STACK_DIR, the default state dir. */
export function parseArgs(argv, env = process.env) {
  const [command = 'status', ...rest] = argv;
  const opts = {
    command,
    only: undefined,
    purge: false,
    noBuild: false,
    check: false,
    out: undefined,
    signal: 'SIGKILL',
    stateDir: env.CELLSCHED_STACK_DIR,
    system: {},
  };
  for (let i = 0; i < rest.length; i++) {
    const [flag, inline] = rest[i].split(/=(.*)/s);
    const value = () => inline ?? rest[++i];
    if (flag === '--only') opts.only = value();
    else if (flag === '--purge') opts.purge = true;
    else if (flag === '--no-build') opts.noBuild = true;
    else if (flag === '--check') opts.check = true;
    else if (flag === '--out') opts.out = value();
    else if (flag === '--signal') opts.signal = value();
    else if (flag === '--state-dir') opts.stateDir = value();
    else if (flag === '--prefix') opts.system.prefix = value();
    else if (NUMERIC[flag]) {
      const [key, min, max] = NUMERIC[flag];
      const v = Number(value());
      if (!Number.isFinite(v) || v < min || v > max || (key !== 'buildFailureRate' && !Number.isInteger(v)))
        throw new Error(`${flag} must be a number in [${min}, ${max}]`);
      opts.system[key] = v;
    } else throw new Error(`unknown option ${rest[i]}`);
  }
  if (opts.system.prefix !== undefined && !/^[a-z][a-z0-9_]{0,30}$/.test(opts.system.prefix))
    throw new Error('--prefix must match [a-z][a-z0-9_]*');
  return opts;
}

/** The usage text; `names`: the services table's names (for `--only`). */
export function usage(names) {
  return `usage: pnpm stack up [--cells N] [--hosts-per-cell M] [--schedulers K] [--build-failure-rate R] [--port-offset P] [--prefix NAME] [--state-dir DIR]
       pnpm stack up|status|down|reset [--only ${names.join(',')}]   (down --purge also drops the system's databases (placement's too), roles and vhosts, and its files in the state dir)
       pnpm stack kill --only NAME[,NAME] [--signal SIGKILL]     pnpm stack start --only NAME[,NAME] [--no-build]   (a running system's services)
       pnpm stack compose [--cells N] [--hosts-per-cell M] [--schedulers K] [--build-failure-rate R] [--port-offset P] [--prefix NAME] [--out FILE] [--check]
       pnpm stack endpoints [--port-offset P] [--schedulers K]   (the system's addresses, JSON)`;
}
