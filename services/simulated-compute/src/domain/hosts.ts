import { createHash } from 'node:crypto';

/** One simulated compute host (one service, one node named like its host, as Nova's fake driver). */
export interface SimulatedHost {
  readonly host: string;
  readonly nodename: string;
  /** Stable across restarts (derived from cell and host), so a restarted process is the same provider. */
  readonly computeNodeUuid: string;
  /** The node's CPU architecture (Nova's supported_instances and cpu_info). */
  readonly arch: string;
}

/** A uuid-shaped name-based id (SHA-1 of the name, RFC 4122 version 5 bits). Pure. */
export function nameUuid(name: string): string {
  const h = createHash('sha1').update(name).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/**
 * Hosts `<prefix><first>` ... of one cell, each of architecture `arch` unless `archOf` names
 * another for it. Pure; throws RangeError for a bad count.
 */
export function simulatedHosts(
  cell: string,
  prefix: string,
  count: number,
  first = 1,
  arch = 'x86_64',
  archOf: Readonly<Record<string, string>> = {},
): SimulatedHost[] {
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError('host count must be a positive integer');
  return Array.from({ length: count }, (_, i) => {
    const host = `${prefix}${first + i}`;
    return { host, nodename: host, computeNodeUuid: nameUuid(`cellsched:${cell}:${host}`), arch: archOf[host] ?? arch };
  });
}

/** A guest's power (Nova's power_state: running, shutdown). */
export type GuestPower = 'running' | 'shutdown';

/** The build attempt recorded for a guest a move or another action put on a host (any terminate removes it). */
export const MOVE_GUEST_ATTEMPT = 0;

/** One guest: its build attempt, its power, and for one a live migration brought here the block_migration it was asked with. */
export interface Guest {
  readonly attempt: number;
  readonly power: GuestPower;
  /** "auto", "true" or "false": how the live migration that placed it was asked to copy its disk. */
  readonly blockMigration?: string;
}

/**
 * The guests this process runs: instance uuid → build attempt and power, per host. A guest is
 * recorded before its success is reported, so a redelivered build of the same attempt
 * reports again instead of building twice. A guest placed by an instance step (a move's
 * destination, an unshelve, a rebuild) carries attempt {@link MOVE_GUEST_ATTEMPT}.
 */
export class Guests {
  private readonly byHost = new Map<string, Map<string, Guest>>();
  /** Guests spawned and terminated since start (the control endpoint's /stats). */
  readonly stats = { spawned: 0, terminated: 0 };

  /** `onChange(host)`: a guest was placed on or destroyed from the host (the resource tracker's stats). */
  constructor(private readonly onChange: (host: string) => void = () => undefined) {}

  /** How many guests the host runs. */
  count(host: string): number {
    return this.byHost.get(host)?.size ?? 0;
  }

  has(host: string, uuid: string, attempt: number): boolean {
    return this.byHost.get(host)?.get(uuid)?.attempt === attempt;
  }

  /** The guest of `uuid` on `host`, if any. */
  get(host: string, uuid: string): Guest | undefined {
    return this.byHost.get(host)?.get(uuid);
  }

  private put(host: string, uuid: string, g: Guest): void {
    let m = this.byHost.get(host);
    if (m === undefined) this.byHost.set(host, (m = new Map()));
    if (!m.has(uuid)) this.stats.spawned++;
    m.set(uuid, g);
    this.onChange(host);
  }

  add(host: string, uuid: string, attempt: number): void {
    const m = this.byHost.get(host);
    // NOTE: a build always counts as a spawn (a redelivered one is deduplicated by `has` before it gets here)
    if (m?.has(uuid) === true) m.delete(uuid);
    this.put(host, uuid, { attempt, power: 'running' });
  }

  /**
   * Puts the instance's guest on `host` (a move's, an unshelve's, a rebuild's) with this power (and
   * the block_migration of the live migration placing it); an existing one keeps its attempt and
   * block_migration. Idempotent.
   */
  place(host: string, uuid: string, power: GuestPower, blockMigration?: string): void {
    const had = this.get(host, uuid);
    const bm = blockMigration ?? had?.blockMigration;
    this.put(host, uuid, { attempt: had?.attempt ?? MOVE_GUEST_ATTEMPT, power, ...(bm === undefined ? {} : { blockMigration: bm }) });
  }

  /** Destroys the guest if it is of this attempt or an older one. Returns whether one went. */
  remove(host: string, uuid: string, attempt: number): boolean {
    const m = this.byHost.get(host);
    const g = m?.get(uuid);
    if (m === undefined || g === undefined || g.attempt > attempt) return false;
    this.stats.terminated++;
    m.delete(uuid);
    this.onChange(host);
    return true;
  }

  /** Destroys the instance's guest on `host`, whatever its attempt. Idempotent: whether one went. */
  drop(host: string, uuid: string): boolean {
    return this.remove(host, uuid, Number.MAX_SAFE_INTEGER);
  }

  /** host → instance uuid → guest, for the control endpoint's `/guests/detail`. */
  details(): Record<string, Record<string, Guest>> {
    const out: Record<string, Record<string, Guest>> = {};
    for (const [h, m] of this.byHost) if (m.size > 0) out[h] = Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)));
    return out;
  }

  /** host → instance uuids, for the control endpoint. */
  snapshot(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [h, m] of this.byHost) if (m.size > 0) out[h] = [...m.keys()].sort();
    return out;
  }
}
