// The load of `pnpm bench e2e`: creates sent through the compute API (single creates from
// closed-loop clients, multi-creates, an open loop at a fixed rate), and the tracker that
// times each server from the moment its POST was sent to its `launched_at`, read from the
// cell databases (polling the API at 200 servers/s would be a load of its own).
import http from 'node:http';
import { Pool } from 'pg';

const IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6';

/** One POST /servers as sent: a single create (tracked by uuid) or a multi-create (by reservation id). */
interface Sent {
  readonly sentAt: number;
  readonly expect: number;
  seen: number;
}

/** A server that reached ACTIVE or ERROR: when its POST was sent and when it got there (epoch ms). */
export interface Finished {
  readonly sentAt: number;
  readonly doneAt: number;
  readonly active: boolean;
}

/** What one phase of load produced. */
export interface PhaseResult {
  readonly name: string;
  readonly seconds: number;
  /** Servers asked for (a multi-create counts its max_count) and accepted (202). */
  readonly requested: number;
  readonly accepted: number;
  /** HTTP status (or `error`) → count, for the refused ones. */
  readonly refused: Record<string, number>;
  /** Servers ACTIVE / ERROR by the end of the phase's drain. */
  readonly active: number;
  readonly error: number;
  /** Servers accepted but not ACTIVE or ERROR when the drain gave up. */
  readonly unfinished: number;
  readonly acceptedPerS: number;
  /** Servers that became ACTIVE inside the load window, per second of it. */
  readonly activePerS: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Sends the open loop could not make on time (more than `maxInFlight` POSTs waiting). */
  readonly lagged: number;
}

/** Times servers by polling the cell databases (cell0 included) as the superuser. */
export class Tracker {
  private readonly pools: Pool[];
  private readonly byUuid = new Map<string, Sent>();
  private readonly byReservation = new Map<string, Sent>();
  readonly finished: Finished[] = [];
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private lastError: string | undefined;

  constructor(cellDbUrls: readonly string[]) {
    this.pools = cellDbUrls.map((url) => new Pool({ connectionString: url, max: 1 }));
  }

  // NOTE: a server's end is its launched_at as the database stamped it, so the period changes when
  // the bench notices, not what it measures; every 250 ms, this query over thousands of pending
  // uuids was ~9% of PostgreSQL's statement time in a 10,000-host closed loop (pg_stat_statements),
  // counted in the system's CPU per build
  start(periodMs = 1000): void {
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      this.poll()
        .catch((e: unknown) => {
          this.lastError = (e as Error).message;
        })
        .finally(() => {
          this.busy = false;
        });
    }, periodMs);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.busy) await new Promise((r) => setTimeout(r, 20));
    await Promise.all(this.pools.map((p) => p.end()));
  }

  get pending(): number {
    return this.byUuid.size + [...this.byReservation.values()].reduce((n, s) => n + s.expect - s.seen, 0);
  }
  get error(): string | undefined {
    return this.lastError;
  }

  trackServer(uuid: string, sentAt: number): void {
    this.byUuid.set(uuid, { sentAt, expect: 1, seen: 0 });
  }
  trackReservation(reservationId: string, count: number, sentAt: number): void {
    this.byReservation.set(reservationId, { sentAt, expect: count, seen: 0 });
  }

  private async poll(): Promise<void> {
    if (this.byUuid.size === 0 && this.byReservation.size === 0) return;
    const uuids = [...this.byUuid.keys()];
    const reservations = [...this.byReservation.keys()];
    const rows = (
      await Promise.all(
        this.pools.map((p) =>
          p.query<{ uuid: string; reservation_id: string | null; vm_state: string; done: Date }>(
            `SELECT uuid::text, reservation_id, vm_state, COALESCE(launched_at, updated_at) AS done FROM instances
       WHERE (uuid = ANY($1::uuid[]) OR reservation_id = ANY($2::text[])) AND vm_state IN ('active', 'error') AND task_state IS NULL`,
            [uuids, reservations],
          ),
        ),
      )
    ).flatMap((r) => r.rows);
    for (const r of rows) {
      const one = this.byUuid.get(r.uuid);
      const many = r.reservation_id === null ? undefined : this.byReservation.get(r.reservation_id);
      const sent = one ?? many;
      if (sent === undefined) continue;
      if (one !== undefined) this.byUuid.delete(r.uuid);
      else if (many !== undefined) {
        // NOTE: a reservation's rows come back on every poll until all are done: count each uuid once
        if (this.seenOfReservation.has(r.uuid)) continue;
        this.seenOfReservation.add(r.uuid);
        if (++many.seen >= many.expect) this.byReservation.delete(r.reservation_id ?? '');
      }
      this.finished.push({ sentAt: sent.sentAt, doneAt: r.done.getTime(), active: r.vm_state === 'active' });
    }
  }

  private readonly seenOfReservation = new Set<string>();

  /** Stops waiting for what is still pending (a phase's leftovers must not hold up the next one's drain). */
  forgetPending(): void {
    this.byUuid.clear();
    this.byReservation.clear();
  }

  /** Waits until nothing is pending or `timeoutMs` passed; resolves how many are still pending. */
  async drain(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 300));
    return this.pending;
  }
}

/**
 * The load generator's HTTP client: node:http over kept-alive connections. The generator shares
 * the two cores with the system it measures, so its own cost per create matters: `fetch` (undici
 * with WHATWG streams) took ~0.5 ms of CPU per create at 180/s.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });

function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      timeout: 60_000,
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { name: 'TimeoutError' })));
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.end(body);
  });
}

/** Sends creates to one compute API as admin (the token the deployment ships). */
export class Creator {
  readonly refused: Record<string, number> = {};
  requested = 0;
  accepted = 0;
  private n = 0;

  constructor(
    private readonly apiUrl: string,
    private readonly tracker: Tracker,
    private readonly tag: string,
  ) {}

  /** One POST /servers for `count` servers (a multi-create when > 1); resolves once answered. */
  async create(count = 1): Promise<void> {
    const name = `${this.tag}-${this.n++}`;
    const body =
      count === 1
        ? { server: { name, flavorRef: '1', imageRef: IMAGE, networks: 'none' } }
        : {
            server: {
              name,
              flavorRef: '1',
              imageRef: IMAGE,
              networks: 'none',
              min_count: count,
              max_count: count,
              return_reservation_id: true,
            },
          };
    this.requested += count;
    const sentAt = Date.now();
    try {
      const r = await post(`${this.apiUrl}/servers`, JSON.stringify(body), {
        'x-auth-token': 'admin',
        'content-type': 'application/json',
        'openstack-api-version': 'compute 2.60',
      });
      const text = r.text;
      if (r.status !== 202) {
        this.refused[String(r.status)] = (this.refused[String(r.status)] ?? 0) + count;
        return;
      }
      const b = JSON.parse(text) as { server?: { id: string }; reservation_id?: string };
      if (count === 1 && b.server) this.tracker.trackServer(b.server.id, sentAt);
      else if (b.reservation_id) this.tracker.trackReservation(b.reservation_id, count, sentAt);
      this.accepted += count;
    } catch (e) {
      const key = (e as Error).name === 'TimeoutError' ? 'timeout' : 'error';
      this.refused[key] = (this.refused[key] ?? 0) + count;
    }
  }
}

/** `clients` closed-loop clients, each sending the next create when the last was answered, for `seconds` (or until `maxServers` were asked for). */
export async function closedLoop(
  creator: Creator,
  clients: number,
  seconds: number,
  perRequest = 1,
  maxServers = Infinity,
): Promise<{ lagged: number }> {
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < end && creator.requested + perRequest <= maxServers) await creator.create(perRequest);
    }),
  );
  return { lagged: 0 };
}

/** An open loop: one create every 1/rate s for `seconds`, whatever the answers; a send that finds `maxInFlight` waiting is skipped (lagged). */
export async function openLoop(creator: Creator, rate: number, seconds: number, maxInFlight = 1024): Promise<{ lagged: number }> {
  const t0 = Date.now();
  const total = Math.round(rate * seconds);
  let inFlight = 0;
  let lagged = 0;
  const all: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const at = t0 + (i * 1000) / rate;
    const wait = at - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (inFlight >= maxInFlight) {
      lagged++;
      continue;
    }
    inFlight++;
    all.push(
      creator.create().finally(() => {
        inFlight--;
      }),
    );
  }
  await Promise.all(all);
  return { lagged };
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/**
 * Runs one phase: `drive` sends the load through a fresh Creator, then the tracker drains
 * (bounded); the figures cover the servers this phase sent.
 */
export async function phase(
  name: string,
  apiUrl: string,
  tracker: Tracker,
  drainMs: number,
  drive: (c: Creator) => Promise<{ lagged: number }>,
): Promise<PhaseResult> {
  const creator = new Creator(apiUrl, tracker, `bench-${name}`);
  const t0 = Date.now();
  const { lagged } = await drive(creator);
  const loadEnd = Date.now();
  const unfinished = await tracker.drain(drainMs);
  tracker.forgetPending();
  const mine = tracker.finished.filter((f) => f.sentAt >= t0 && f.sentAt <= loadEnd);
  const seconds = (loadEnd - t0) / 1000;
  const latencies = mine
    .filter((f) => f.active)
    .map((f) => f.doneAt - f.sentAt)
    .sort((a, b) => a - b);
  const activeInWindow = mine.filter((f) => f.active && f.doneAt <= loadEnd).length;
  return {
    name,
    seconds: Math.round(seconds * 10) / 10,
    requested: creator.requested,
    accepted: creator.accepted,
    refused: creator.refused,
    active: latencies.length,
    error: mine.length - latencies.length,
    unfinished,
    acceptedPerS: round1(creator.accepted / seconds),
    activePerS: round1(activeInWindow / seconds),
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? 0,
    lagged,
  };
}

export const round1 = (x: number): number => Math.round(x * 10) / 10;
