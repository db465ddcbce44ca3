// Look-ups scenarios use for their own expectations (the global invariants are in invariants.ts).
import type { ChaosContext } from './scenario';

export interface ServerView {
  id: string;
  status: string;
  fault?: { message?: string; code?: number; details?: string };
  'OS-EXT-SRV-ATTR:host'?: string | null;
}

/** The API's view of these servers (admin, every cell), by id; ids the API does not show are absent. */
export async function serverViews(ctx: ChaosContext, ids: readonly string[]): Promise<Map<string, ServerView>> {
  const want = new Set(ids);
  const out = new Map<string, ServerView>();
  let marker: string | undefined;
  for (;;) {
    const r = await ctx.stack.api<{ servers: ServerView[] }>(
      'GET',
      `/servers/detail?all_tenants=1&limit=1000${marker ? `&marker=${marker}` : ''}`,
    );
    if (r.status !== 200) throw new Error(`GET /servers/detail: ${r.status}`);
    for (const s of r.body.servers) if (want.has(s.id)) out.set(s.id, s);
    if (r.body.servers.length < 1000) return out;
    marker = r.body.servers[r.body.servers.length - 1]?.id;
  }
}

export interface BuildEvent {
  instance_uuid: string;
  host: string | null;
  result: string | null;
  cell: string;
}

/** Every compute build event (`compute__do_build_and_run_instance`) of every cell. */
export async function buildEvents(ctx: ChaosContext): Promise<BuildEvent[]> {
  const out: BuildEvent[] = [];
  for (const c of ctx.stack.topology().cells) {
    const rows = await ctx.stack.query<Omit<BuildEvent, 'cell'>>(
      ctx.stack.adminUrl(`${ctx.stack.prefix}_${c.name}`),
      `
      SELECT a.instance_uuid::text, e.host, e.result FROM instance_actions a JOIN instance_actions_events e ON e.action_id = a.id
      WHERE a.action = 'create' AND e.event = 'compute__do_build_and_run_instance'`,
    );
    for (const r of rows) out.push({ ...r, cell: c.name });
  }
  return out;
}

/** The cell whose live instance row holds each uuid ('cell0' included). */
export async function cellOfInstances(ctx: ChaosContext): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of ['cell0', ...ctx.stack.topology().cells.map((c) => c.name)]) {
    const rows = await ctx.stack.query<{ uuid: string }>(
      ctx.stack.adminUrl(`${ctx.stack.prefix}_${name}`),
      'SELECT uuid::text FROM instances WHERE deleted_at IS NULL',
    );
    for (const r of rows) out.set(r.uuid, name);
  }
  return out;
}

export const MAX_RETRIES = 'Exceeded maximum number of retries';
export const NO_VALID_HOST = 'No valid host was found';

/** Collects per-server problems of one kind and records them as one expectation. */
export class Tally {
  private readonly problems: string[] = [];
  private checked = 0;
  constructor(private readonly what: string) {}
  check(ok: boolean, problem: () => string): void {
    this.checked++;
    if (!ok) this.problems.push(problem());
  }
  report(ctx: ChaosContext): void {
    const shown = this.problems.slice(0, 5).join(' | ');
    ctx.expect(
      this.problems.length === 0,
      `${this.what} (${this.checked - this.problems.length}/${this.checked})${shown ? `: ${shown}` : ''}`,
    );
  }
}
