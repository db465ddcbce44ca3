// What "changes nothing" means for the compute API: every row of every API DB table, and the
// casts the fake super-conductor received (the api never writes a cell DB: its role cannot).
import type { Harness } from './harness';

/** A digest of the whole API DB plus the number of casts of each kind seen so far. */
export interface ApiState {
  readonly tables: Readonly<Record<string, string>>;
  readonly casts: readonly number[];
}

/** Reads {@link ApiState}: one md5 per API DB table over its rows in a fixed order, in one statement. */
export async function apiState(h: Harness): Promise<ApiState> {
  const { rows } = await h.apiDb.pool.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
  );
  const digests = rows.map(
    ({ name }) => `(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM "${name}" t) AS "${name}"`,
  );
  const r = await h.apiDb.pool.query<Record<string, string>>(`SELECT ${digests.join(', ')}`);
  return {
    tables: { ...r.rows[0] },
    casts: [h.seen.schedule.length, h.seen.deletes.length, h.seen.services.length, h.seen.actions.length],
  };
}

/** Nova's error body: exactly one key naming the fault, holding `{code, message}` with code = the HTTP status. */
export function isNovaError(status: number, text: string): boolean {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const entries = Object.entries(body as Record<string, unknown>);
  if (entries.length !== 1) return false;
  const [kind, inner] = entries[0] ?? ['', undefined];
  const fault = inner as { code?: unknown; message?: unknown } | null;
  return (
    (NOVA_FAULTS[status] ?? 'computeFault') === kind &&
    fault !== null &&
    typeof fault === 'object' &&
    fault.code === status &&
    typeof fault.message === 'string' &&
    fault.message !== ''
  );
}

/** Nova's fault names by status (nova/api/openstack/wsgi.py Fault._fault_names; any other status is a computeFault). */
export const NOVA_FAULTS: Readonly<Record<number, string>> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  406: 'notAcceptable',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  503: 'serviceUnavailable',
};
