import { createHash } from 'node:crypto';

/** One simulated compute host (one service, one node named like its host, as Nova's fake driver). */
export interface SimulatedHost {
  readonly host: string;
  readonly nodename: string;
  /** Stable across restarts (derived from cell and host), so a restarted process is the same provider. */
  readonly computeNodeUuid: string;
}

/** A uuid-shaped name-based id (SHA-1 of the name, RFC 4122 version 5 bits). Pure. */
export function nameUuid(name: string): string {
  const h = createHash('sha1').update(name).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** Hosts `<prefix><first>` ... of one cell. Pure; throws RangeError for a bad count. */
export function simulatedHosts(cell: string, prefix: string, count: number, first = 1): SimulatedHost[] {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError('host count must be a positive integer');
  return Array.from({ length: count }, (_, i) => {
    const host = `${prefix}${first + i}`;
    return { host, nodename: host, computeNodeUuid: nameUuid(`cellsched:${cell}:${host}`) };
  });
}

/**
 * The guests this process runs: instance uuid → build attempt, per host. A guest is
 * recorded before its success is reported, so a redelivered build of the same attempt
 * reports again instead of building twice.
 */
export class Guests {
  private readonly byHost = new Map<string, Map<string, number>>();
  /** Guests spawned and terminated since start (the control endpoint's /stats). */
  readonly stats = { spawned: 0, terminated: 0 };

  has(host: string, uuid: string, attempt: number): boolean { return this.byHost.get(host)?.get(uuid) === attempt; }

  add(host: string, uuid: string, attempt: number): void {
    let m = this.byHost.get(host);
    if (m === undefined) this.byHost.set(host, (m = new Map()));
    m.set(uuid, attempt);
    this.stats.spawned++;
  }

  /** Destroys the guest if it is of this attempt or an older one. Returns whether one went. */
  remove(host: string, uuid: string, attempt: number): boolean {
    const m = this.byHost.get(host);
    const a = m?.get(uuid);
    if (m === undefined || a === undefined || a > attempt) return false;
    this.stats.terminated++;
    return m.delete(uuid);
  }

  /** host → instance uuids, for the control endpoint. */
  snapshot(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [h, m] of this.byHost) if (m.size > 0) out[h] = [...m.keys()].sort();
    return out;
  }
}
