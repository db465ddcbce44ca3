import { grantApiDbReads, isApiDbReader, listCellMappings, syncApiDb, type ApiDbReader } from '@cellsched/api-db';
import { CELL_DB_READERS, grantCellDbReads, isCellDbReader, syncCellDb, type CellDbReader } from '@cellsched/cell-db';
import { CELL0_UUID } from '@cellsched/config';
import { keyValues, option, UsageError } from '../args';
import type { Command } from './types';

/** `--read-only-role READER=ROLE` options, checked against the readers known for that database. */
function readOnlyRoles<R extends string>(
  args: Parameters<Command['run']>[1],
  known: readonly string[],
  isReader: (r: string) => r is R,
): [R, string][] {
  const roles = Object.entries(keyValues(args, 'read_only_role'));
  const unknown = roles.filter(([reader]) => !isReader(reader)).map(([reader]) => reader);
  if (unknown.length > 0)
    throw new UsageError(`argument --read-only-role: unknown reader ${unknown.join(', ')} (choose from ${known.join(', ')})`);
  const badRole = roles.find(([, role]) => !/^[a-z_][a-z0-9_]{0,62}$/.test(role));
  if (badRole !== undefined)
    throw new UsageError(`argument --read-only-role: role must be a lowercase PostgreSQL identifier, got '${badRole[1]}'`);
  return roles as [R, string][];
}

async function schemaVersion(pool: import('pg').Pool): Promise<number> {
  const exists = await pool.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (exists.rows[0]?.t === null) return 0;
  const r = await pool.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return r.rows[0]?.v ?? 0;
}

export const apiDbSync: Command = {
  usage: 'api_db sync [--read-only-role scheduler=ROLE]',
  help: 'Apply the API database migrations (idempotent); then let each named read-only role SELECT exactly what that reader reads (the role must exist).',
  options: ['read_only_role'],
  async run(ctx, args) {
    const roles = readOnlyRoles<ApiDbReader>(args, ['scheduler'], isApiDbReader);
    const applied = await syncApiDb(ctx.apiDb());
    for (const name of applied) ctx.io.out(`Applied ${name}`);
    for (const [reader, role] of roles) await grantApiDbReads(ctx.apiDb(), reader, role);
    return 0;
  },
};

export const apiDbVersion: Command = {
  usage: 'api_db version',
  help: "Print the API database's schema version.",
  async run(ctx) {
    ctx.io.out(String(await schemaVersion(ctx.apiDb())));
    return 0;
  },
};

export const dbSync: Command = {
  usage: 'db sync [--database_connection URL] [--read-only-role scheduler=ROLE] [--read-only-role api=ROLE]',
  help:
    'Apply the cell migrations to one cell database, or (without the option) to every mapped cell, cell0 included; ' +
    'then let each named read-only role SELECT exactly what that reader reads there (the scheduler not in cell0; the role must exist).',
  options: ['database_connection', 'read_only_role'],
  async run(ctx, args) {
    const roles = readOnlyRoles<CellDbReader>(args, Object.keys(CELL_DB_READERS), isCellDbReader);
    const url = option(args, 'database_connection');
    const targets =
      url !== undefined
        ? [{ label: 'database', url, cell0: false }]
        : (await listCellMappings(ctx.apiDb())).map((c) => ({
            label: `cell '${c.name ?? ''}' (${c.uuid})`,
            url: c.databaseConnection,
            cell0: c.uuid === CELL0_UUID,
          }));
    if (targets.length === 0) {
      ctx.io.err('No cells are mapped: run cell_v2 map_cell0 and cell_v2 create_cell first, or pass --database_connection.');
      return 1;
    }
    for (const t of targets) {
      const applied = await syncCellDb(ctx.openDb(t.url));
      ctx.io.out(applied.length === 0 ? `${t.label}: up to date` : `${t.label}: applied ${applied.join(', ')}`);
      for (const [reader, role] of roles) {
        if (!t.cell0 || CELL_DB_READERS[reader].cell0) await grantCellDbReads(ctx.openDb(t.url), reader, role);
      }
    }
    return 0;
  },
};

export const dbVersion: Command = {
  usage: 'db version --database_connection URL',
  help: "Print a cell database's schema version.",
  options: ['database_connection'],
  async run(ctx, args) {
    const url = option(args, 'database_connection');
    if (url === undefined) {
      ctx.io.err('Must specify --database_connection.');
      return 1;
    }
    ctx.io.out(String(await schemaVersion(ctx.openDb(url))));
    return 0;
  },
};
