import { ApiDbError } from '@cellsched/api-db';
import { CellDbError } from '@cellsched/cell-db';
import { ConfigError, loadConfig } from '@cellsched/config';
import { createPool, DbInputError, MigrationError, sqlState } from '@cellsched/db';
import { PlacementRestError, PlacementUnreachableError, ReportClient } from '@cellsched/placement-client';
import { CellUnreadableError } from './adapters/consumer-facts';
import type { Pool } from 'pg';
import { parseArgs, UsageError } from './args';
import { findCommand, usage } from './commands';
import type { CommandContext, Io } from './commands/types';
import { schema } from './config';

/** Splits leading global options (`--api-db-url URL`) from the command and its arguments. */
function splitGlobals(argv: readonly string[]): { globals: string[]; rest: string[] } {
  let i = 0;
  while (i < argv.length && (argv[i] ?? '').startsWith('--') && !['--help'].includes(argv[i] ?? ''))
    i += (argv[i] ?? '').includes('=') ? 1 : 2;
  return { globals: argv.slice(0, i), rest: argv.slice(i) };
}

function context(io: Io, urls: { apiDbUrl?: string; placementUrl?: string }, pools: Map<string, Pool>): CommandContext {
  const open = (url: string, name: string): Pool => {
    let pool = pools.get(url);
    if (pool === undefined) {
      pool = createPool({ url, max: 2, applicationName: name, onIdleError: () => undefined });
      pools.set(url, pool);
    }
    return pool;
  };
  return {
    io,
    apiDb: () => {
      if (urls.apiDbUrl === undefined)
        throw new UsageError('the API database URL is not set: pass --api-db-url or set CELLSCHED_API_DB_URL');
      return open(urls.apiDbUrl, 'cellsched-manage');
    },
    openDb: (url) => open(url, 'cellsched-manage'),
    placement: () => {
      if (urls.placementUrl === undefined)
        throw new UsageError("placement's URL is not set: pass --placement-url or set CELLSCHED_PLACEMENT_URL");
      return new ReportClient({ baseUrl: urls.placementUrl.replace(/\/+$/, '') });
    },
  };
}

/** Maps an error to Nova-like output and an exit code (2 usage, 1 anything else). */
function report(io: Io, err: unknown): number {
  if (err instanceof UsageError) {
    io.err(`cellsched-manage: error: ${err.message}`);
    return 2;
  }
  if (err instanceof ConfigError) {
    io.err(err.problems.join('\n'));
    return 2;
  }
  if (err instanceof ApiDbError || err instanceof CellDbError || err instanceof MigrationError || err instanceof DbInputError) {
    io.err(`ERROR: ${err.message}`);
    return 1;
  }
  if (err instanceof CellUnreadableError || err instanceof PlacementRestError || err instanceof PlacementUnreachableError) {
    io.err(`ERROR: ${err.message}`);
    return 1;
  }
  if (sqlState(err) === '42704') {
    io.err(`ERROR: ${(err as Error).message}`);
    return 1;
  } // a --read-only-role that does not exist
  io.err(`An error has occurred:\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return 1;
}

/** Runs one cellsched-manage invocation; returns its exit code. Never throws. */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  const { globals, rest } = splitGlobals(argv);
  if (rest.length === 0 || rest[0] === '--help' || rest[0] === '-h' || rest[0] === 'help') {
    (rest.length === 0 ? io.err : io.out)(usage());
    return rest.length === 0 ? 2 : 0;
  }
  const found = findCommand(rest);
  if (found === undefined) {
    io.err(`cellsched-manage: error: unknown command: ${rest.slice(0, 2).join(' ')}\n\n${usage()}`);
    return 2;
  }
  const pools = new Map<string, Pool>();
  try {
    const config = loadConfig(schema, { argv: globals });
    const args = parseArgs(found.rest, found.command.flags ?? [], found.command.options ?? []);
    if (found.name.includes(' ') && args.positionals.length > 0)
      throw new UsageError(`unrecognized arguments: ${args.positionals.join(' ')}`);
    return await found.command.run(context(io, config, pools), args);
  } catch (err) {
    return report(io, err);
  } finally {
    await Promise.all([...pools.values()].map((p) => p.end().catch(() => undefined)));
  }
}
