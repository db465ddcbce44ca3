/**
 * Undoes real Placement's leaked-consumer bug right after it happens (README, "Where real
 * Placement is wrong"): a PUT/POST of allocations refused (a 400 for an unknown provider, a
 * 409 of POST /allocations) can leave the consumer it created; deleting the consumers without allocations from the peer's
 * database keeps both databases alike, so later operations are compared on the same state
 * instead of cascading from that one bug. The bug's own answer is still counted.
 */
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import type { Answer } from './http';
import type { Operation } from './world';

/** The peer's database as up.sh configures it (its state dir records the PostgreSQL port). */
export function defaultPeerDb(): string {
  const state = process.env.PLACEMENT_STATE_DIR ?? '/var/tmp/placement-peer';
  let port = '5432';
  try {
    port = readFileSync(`${state}/pgport`, 'utf8').trim() || port;
  } catch {
    /* the default cluster */
  }
  return `postgres://placement_peer:placement_peer@127.0.0.1:${port}/placement_peer`;
}

export class PeerRepair {
  repairs = 0;

  private constructor(private readonly client: Client) {}

  static async connect(url: string): Promise<PeerRepair> {
    const client = new Client({ connectionString: url });
    await client.connect();
    return new PeerRepair(client);
  }

  /** Repairs after any refused allocation write of the peer (those may leave a consumer behind). */
  async afterPeerAnswer(op: Operation, peer: Answer): Promise<void> {
    if (!op.kind.startsWith('allocations.') || op.method === 'GET' || peer.status < 400) return;
    const r = await this.client.query(
      'DELETE FROM consumers c WHERE NOT EXISTS (SELECT 1 FROM allocations a WHERE a.consumer_id = c.uuid)',
    );
    this.repairs += r.rowCount ?? 0;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}
