import { syncApiDb } from '@cellsched/api-db';
import { listCellMappings } from '@cellsched/api-db';
import { syncCellDb } from '@cellsched/cell-db';
import { option } from '../args';
import type { Command } from './types';

async function schemaVersion(pool: import('pg').Pool): Promise<number> {
  const exists = await pool.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (exists.rows[0]?.t === null) return 0;
  const r = await pool.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return r.rows[0]?.v ?? 0;
}

export const apiDbSync: Command = {
  usage: 'api_db sync', help: 'Apply the API database migrations (idempotent).',
  async run(ctx) {
    const applied = await syncApiDb(ctx.apiDb());
    for (const name of applied) ctx.io.out(`Applied ${name}`);
    return 0;
  },
};

export const apiDbVersion: Command = {
  usage: 'api_db version', help: "Print the API database's schema version.",
  async run(ctx) {
    ctx.io.out(String(await schemaVersion(ctx.apiDb())));
    return 0;
  },
};

export const dbSync: Command = {
  usage: 'db sync [--database_connection URL]',
  help: 'Apply the cell migrations to one cell database, or (without the option) to every mapped cell, cell0 included.',
  options: ['database_connection'],
  async run(ctx, args) {
    const url = option(args, 'database_connection');
    const targets = url !== undefined
      ? [{ label: 'database', url }]
      : (await listCellMappings(ctx.apiDb())).map((c) => ({ label: `cell '${c.name ?? ''}' (${c.uuid})`, url: c.databaseConnection }));
    if (targets.length === 0) {
      ctx.io.err('No cells are mapped: run cell_v2 map_cell0 and cell_v2 create_cell first, or pass --database_connection.');
      return 1;
    }
    for (const t of targets) {
      const applied = await syncCellDb(ctx.openDb(t.url));
      ctx.io.out(applied.length === 0 ? `${t.label}: up to date` : `${t.label}: applied ${applied.join(', ')}`);
    }
    return 0;
  },
};

export const dbVersion: Command = {
  usage: 'db version --database_connection URL', help: "Print a cell database's schema version.",
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
