// What a build costs, for `pnpm bench e2e`: CPU time per process (the system's own, PostgreSQL's
// and RabbitMQ's, from /proc), PostgreSQL commits (pg_stat_database), the round trips and
// messages of one create (counted in its trace), and the machine's ceilings they are set
// against: pgbench small-transaction commits/s, RabbitMQ persistent confirmed publishes/s.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import { Client } from 'pg';

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || '100');

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  own: number;
  children: number;
}

/** One /proc/PID/stat: its own CPU and its reaped children's, in ms. */
function stat(pid: number): Proc | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const comm = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const n = (i: number): number => Number(f[i] ?? 0) * TICK_MS;
    return { pid, ppid: Number(f[1]), comm, own: n(11) + n(12), children: n(13) + n(14) };
  } catch {
    return undefined;
  }
}

function allProcs(): Proc[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => stat(Number(d)))
    .filter((p): p is Proc => p !== undefined);
}

/** CPU ms so far: each of the system's processes (by pid file), PostgreSQL (postmaster + backends, exited ones included), RabbitMQ, the load generator. */
export function cpuNow(stateDir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of readdirSync(stateDir).filter((n) => n.endsWith('.pid'))) {
    const p = stat(Number(readFileSync(join(stateDir, f), 'utf8')));
    if (p !== undefined) out.set(f.slice(0, -'.pid'.length), p.own + p.children);
  }
  const procs = allProcs();
  const pg = procs.filter((p) => p.comm === 'postgres' || p.comm === 'postmaster');
  const pgPids = new Set(pg.map((p) => p.pid));
  // NOTE: the postmaster's reaped children (closed connections) are in its `children`; live backends count their own
  out.set(
    'postgresql',
    pg.reduce((n, p) => n + p.own + (pgPids.has(p.ppid) ? 0 : p.children), 0),
  );
  out.set(
    'rabbitmq',
    procs.filter((p) => p.comm === 'beam.smp' || p.comm === 'erl_child_setup').reduce((n, p) => n + p.own + p.children, 0),
  );
  const self = process.cpuUsage();
  out.set('load generator', (self.user + self.system) / 1000);
  return out;
}

/** The whole machine's CPU time so far (/proc/stat), busy and in all, in ms: how near the cores are to full. */
export function machineCpuNow(): { busy: number; total: number } {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest is counted in user already)
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0) * TICK_MS;
  const idle = ((f[3] ?? 0) + (f[4] ?? 0)) * TICK_MS;
  return { busy: total - idle, total };
}

/** CPU ms per build for each process between two snapshots. */
export function cpuPerBuild(before: Map<string, number>, after: Map<string, number>, builds: number): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const [name, ms] of after) {
    const d = ms - (before.get(name) ?? 0);
    if (name !== 'load generator') total += d;
    out[name] = Math.round((d / Math.max(1, builds)) * 100) / 100;
  }
  out['total (without the load generator)'] = Math.round((total / Math.max(1, builds)) * 100) / 100;
  return out;
}

/** Commits and rollbacks so far in the system's databases (`<prefix>_*`). */
export async function pgCommits(adminUrl: string, prefix: string): Promise<number> {
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const r = await c.query<{ n: string }>(
      'SELECT COALESCE(sum(xact_commit + xact_rollback), 0) AS n FROM pg_stat_database WHERE datname LIKE $1',
      [`${prefix}\\_%`],
    );
    return Number(r.rows[0]?.n ?? 0);
  } finally {
    await c.end();
  }
}

/** pgbench: small transactions (BEGIN; one INSERT; COMMIT) from 16 clients for `seconds`; commits/s. */
export async function pgbenchCeiling(adminUrl: string, seconds = 10): Promise<number> {
  const db = `benche2e_pgbench_${process.pid}`;
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${db}`);
    const url = new URL(adminUrl);
    url.pathname = `/${db}`;
    const d = new Client({ connectionString: url.toString() });
    await d.connect();
    await d.query('CREATE TABLE t (id bigserial PRIMARY KEY, v int NOT NULL, at timestamptz NOT NULL DEFAULT now())');
    await d.end();
    const script = join(mkdtempSync(join(tmpdir(), 'benche2e-')), 'tx.sql');
    writeFileSync(script, 'BEGIN;\nINSERT INTO t (v) VALUES (1);\nCOMMIT;\n');
    const bin = readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin/pgbench`)[0] ?? 'pgbench';
    const out = execFileSync(bin, ['-n', '-c', '16', '-j', '2', '-T', String(seconds), '-f', script, url.toString()], { encoding: 'utf8' });
    const tps = /tps = ([\d.]+)/.exec(out);
    if (!tps) throw new Error(`pgbench printed no tps:\n${out}`);
    return Math.round(Number(tps[1]));
  } finally {
    await c.query(`DROP DATABASE IF EXISTS ${db}`).catch(() => undefined);
    await c.end();
  }
}

/** Persistent messages (512 B) published with confirms to a quorum queue, 256 unconfirmed at most, a consumer acking them; publishes/s. */
export async function rabbitCeiling(amqpUrl: string, seconds = 10): Promise<number> {
  const conn = await amqp.connect(amqpUrl);
  const queue = `benche2e-ceiling-${process.pid}`;
  try {
    const pub = await conn.createConfirmChannel();
    const sub = await conn.createChannel();
    await pub.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await sub.prefetch(256);
    await sub.consume(queue, (m) => {
      if (m) sub.ack(m);
    });
    const body = Buffer.alloc(512, 'x');
    const end = Date.now() + seconds * 1000;
    let confirmed = 0;
    const window = 256;
    await Promise.all(
      Array.from({ length: window }, async () => {
        while (Date.now() < end) {
          await new Promise<void>((resolve, reject) =>
            pub.sendToQueue(queue, body, { persistent: true }, (err) => (err ? reject(err) : resolve())),
          );
          confirmed++;
        }
      }),
    );
    await pub.deleteQueue(queue);
    return Math.round(confirmed / seconds);
  } finally {
    await conn.close();
  }
}

/** Per create (its trace, rooted at the api's POST /v2.1/servers): round trips to PostgreSQL, messages published, gRPC calls, spans. */
export interface CreateCounts {
  creates: number;
  pgQueries: number;
  pgConnects: number;
  messages: number;
  grpcCalls: number;
  httpCalls: number;
  spans: number;
  /** PostgreSQL round trips per create by service, and the statements most often sent (their first 70 characters) per create. */
  pgQueriesByService: Record<string, number>;
  topStatements: Record<string, number>;
}

/**
 * Counts what the create traces in a span file hold, per create. Needs database spans
 * (`CELLSCHED_TELEMETRY_DB_SPANS_PER_TRACE` > 0 when the system started) for the round trips.
 */
export function countCreates(spanFiles: readonly string[]): CreateCounts {
  interface S {
    traceId: string;
    name: string;
    kind: number;
    parent: string;
    service: string;
    path: string;
    sql: string;
  }
  const spans: S[] = [];
  for (const file of spanFiles) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      for (const rs of JSON.parse(line).resourceSpans ?? []) {
        const service = String(rs.resource?.attributes?.find((a: { key: string }) => a.key === 'service.name')?.value?.stringValue);
        for (const ss of rs.scopeSpans ?? [])
          for (const sp of ss.spans ?? []) {
            const attr = (k: string): string => (sp.attributes ?? []).find((a: { key: string }) => a.key === k)?.value?.stringValue ?? '';
            spans.push({
              traceId: sp.traceId,
              name: sp.name,
              kind: sp.kind,
              parent: sp.parentSpanId ?? '',
              service,
              path: attr('url.path'),
              sql: attr('db.query.text') || attr('db.statement'),
            });
          }
      }
    }
  }
  const creates = new Set(
    spans
      .filter((s) => s.parent === '' && s.service === 'api' && s.name.startsWith('POST') && s.path === '/v2.1/servers')
      .map((s) => s.traceId),
  );
  const mine = spans.filter((s) => creates.has(s.traceId));
  const per = (pred: (s: S) => boolean): number => Math.round((mine.filter(pred).length / Math.max(1, creates.size)) * 10) / 10;
  const perCreate = (key: (s: S) => string, of: S[]): Record<string, number> =>
    Object.fromEntries(
      [...of.reduce((m, x) => m.set(key(x), (m.get(key(x)) ?? 0) + 1), new Map<string, number>())]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 20)
        .map(([k, n]) => [k, Math.round((n / Math.max(1, creates.size)) * 100) / 100]),
    );
  const queries = mine.filter((s) => s.name.startsWith('pg.query'));
  // OTLP span kinds: 3 client, 4 producer
  return {
    pgQueriesByService: perCreate((s) => s.service, queries),
    topStatements: perCreate((s) => s.sql.replace(/\s+/g, ' ').slice(0, 70), queries),
    creates: creates.size,
    pgQueries: per((s) => s.name.startsWith('pg.query')),
    pgConnects: per((s) => s.name.startsWith('pg-pool.connect')),
    messages: per((s) => s.kind === 4),
    grpcCalls: per((s) => s.kind === 3 && s.name.startsWith('grpc.')),
    httpCalls: per((s) => s.kind === 3 && !s.name.startsWith('grpc.') && !s.name.startsWith('pg')),
    spans: per(() => true),
  };
}

/**
 * PostgreSQL's own account of the statements, across every database of the cluster
 * (pg_stat_statements, which must be in shared_preload_libraries): `reset` before the load,
 * `report` after it, the 40 statements that took the most execution time, as a table.
 * Execution time is wall time inside the server (lock waits and the machine's other work
 * included), so compare calls and rows first, times in the same conditions only.
 */
export async function pgStatements(adminUrl: string, what: 'reset' | 'report'): Promise<string> {
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    if (what === 'reset') {
      await c.query('SELECT pg_stat_statements_reset()');
      return '';
    }
    const r = await c.query<{ ms: string; calls: string; per: string; rows: string; db: string; q: string }>(
      `SELECT round(total_exec_time::numeric)::text AS ms, calls::text, round((total_exec_time / calls)::numeric, 3)::text AS per, rows::text,
              coalesce((SELECT datname FROM pg_database d WHERE d.oid = s.dbid), '?') AS db, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q
         FROM pg_stat_statements s ORDER BY total_exec_time DESC LIMIT 40`,
    );
    const total = await c.query<{ ms: string; calls: string }>(
      'SELECT round(sum(total_exec_time)::numeric)::text AS ms, sum(calls)::text AS calls FROM pg_stat_statements',
    );
    const lines = [
      '| total ms | calls | ms per call | rows | database | statement (first 110 characters) |',
      '|---:|---:|---:|---:|---|---|',
      ...r.rows.map((x) => `| ${x.ms} | ${x.calls} | ${x.per} | ${x.rows} | ${x.db} | \`${x.q.replace(/\|/g, '\\|')}\` |`),
    ];
    return `${lines.join('\n')}\n\nall statements: ${total.rows[0]?.ms ?? '?'} ms in ${total.rows[0]?.calls ?? '?'} calls\n`;
  } finally {
    await c.end();
  }
}
