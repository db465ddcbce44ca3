/**
 * Normalises two answers to the same operation and names what differs. A difference is
 * classed by the operation's kind and the aspect (status, error code, header, body, or the
 * error's text only), so one root cause shows as one class however often it is hit.
 */
import type { Answer } from './http';
import type { Operation } from './world';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** One difference between the peer's and our answer. */
export interface Difference {
  /** `kind aspect`, e.g. `inventory.delete_one code`. */
  readonly cls: string;
  /** Only the human text of an error differs (status and code agree). */
  readonly textOnly: boolean;
  /** Set when real Placement is wrong there (a 500, or one of KNOWN_PEER_BUGS): its name. */
  readonly peerBug?: string;
  readonly peer: string;
  readonly ours: string;
}

/** Replaces uuids the sequence did not make (server-generated ones) by `<uuid>`, sorts arrays. */
function canonical(value: unknown, known: ReadonlySet<string>): unknown {
  const fixUuids = (s: string) => s.replace(UUID, (u) => (known.has(u.toLowerCase()) ? u.toLowerCase() : '<uuid>'));
  if (typeof value === 'string') return fixUuids(value);
  if (Array.isArray(value)) {
    return value.map((v) => canonical(v, known)).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[fixUuids(k)] = canonical((value as Record<string, unknown>)[k], known);
    return out;
  }
  return value;
}

interface Shape {
  body: unknown;
  code?: unknown;
  detail?: unknown;
}

/** The comparable shape of an answer: body without request ids; error code and text apart. */
function shape(op: Operation, a: Answer, known: ReadonlySet<string>): Shape {
  let body: unknown = a.text;
  try {
    body = a.text === '' ? '' : JSON.parse(a.text);
  } catch {
    /* not JSON: compare the text */
  }
  const err = (body as { errors?: Array<Record<string, unknown>> } | null)?.errors?.[0];
  if (a.status >= 400 && err !== undefined) {
    const { request_id: _r, detail, code, ...rest } = err;
    return { body: canonical(rest, known), code, detail: canonical(detail, known) };
  }
  if (a.status >= 400 && typeof body === 'string') return { body: body.split('\n')[0] };
  if (op.kind === 'candidates.get' && /[?&]limit=/.test(op.path) && body !== null && typeof body === 'object') {
    // NOTE: which N candidates a limit keeps depends on each server's order: compare the count.
    const b = body as { allocation_requests?: unknown[] };
    return { body: { allocation_requests: b.allocation_requests?.length } };
  }
  return { body: canonical(body, known) };
}

function headerView(a: Answer, known: ReadonlySet<string>): Record<string, string> {
  const h = { ...a.headers };
  if (h.location !== undefined) h.location = canonical(new URL(h.location, 'http://x').pathname, known) as string;
  if (h['last-modified'] !== undefined) h['last-modified'] = 'present';
  return h;
}

const show = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? '(none)')).slice(0, 600);

/**
 * Answers of real Placement 8.0 (on PostgreSQL) that are its bugs, not behaviour to copy.
 * Each names the answer it recognises.
 */
const KNOWN_PEER_BUGS: ReadonlyArray<{ name: string; test: (op: Operation, peer: Answer) => boolean }> = [
  { name: '500', test: (_op, peer) => peer.status >= 500 },
  {
    // ensure_consumer creates the consumer in its own transaction before the providers are
    // looked up; a 400 for an unknown provider then leaves the consumer behind (generation 0,
    // no allocations, invisible to GET /allocations), and the next write with the generation
    // a client can see (null) is refused.
    name: 'leaked consumer after a 400',
    test: (op, peer) =>
      peer.status === 409 && /expected \d+ but got None/.test(peer.text) && JSON.stringify(op.body ?? '').includes('"$CGEN'),
  },
];

/** Every aspect in which `ours` differs from `peer` for `op` (empty: they agree). */
export function compare(op: Operation, peer: Answer, ours: Answer, known: ReadonlySet<string>): Difference[] {
  const peerBug = KNOWN_PEER_BUGS.find((b) => b.test(op, peer))?.name;
  const diff = (aspect: string, p: unknown, o: unknown, textOnly = false): Difference => ({
    cls: `${op.kind} ${aspect}${peerBug !== undefined ? ` (peer: ${peerBug})` : ''}`,
    textOnly,
    peerBug,
    peer: show(p),
    ours: show(o),
  });
  if (peer.status !== ours.status) return [diff(`status ${peer.status}->${ours.status}`, peer.text, ours.text)];
  const out: Difference[] = [];
  const [ps, os] = [shape(op, peer, known), shape(op, ours, known)];
  if (ps.code !== os.code) out.push(diff('code', ps.code, os.code));
  if (JSON.stringify(ps.body) !== JSON.stringify(os.body)) out.push(diff('body', ps.body, os.body));
  const [ph, oh] = [headerView(peer, known), headerView(ours, known)];
  for (const h of new Set([...Object.keys(ph), ...Object.keys(oh)])) {
    if (ph[h] !== oh[h]) out.push(diff(`header ${h}`, ph[h] ?? '(none)', oh[h] ?? '(none)'));
  }
  if (out.length === 0 && JSON.stringify(ps.detail) !== JSON.stringify(os.detail)) out.push(diff('detail', ps.detail, os.detail, true));
  return out;
}
