// A system's addresses as the launcher's plan declares them (`pnpm stack endpoints`), so the
// harnesses never add an offset to 8774 themselves: ports live in deploy/launcher/system.mjs only.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

/** What `pnpm stack endpoints` prints: URLs and host:port pairs on 127.0.0.1. */
export interface Endpoints {
  /** The compute API, `http://127.0.0.1:<port>/v2.1`. */
  api: string;
  /** Placement's REST API, `http://127.0.0.1:<port>`. */
  placement: string;
  placementGrpc: string;
  schedulers: string[];
  /** The superuser URL of PostgreSQL as a compose deployment at this offset publishes it (database `postgres`). */
  composeAdminUrl: string;
}

const known = new Map<number, Endpoints>();

/** The endpoints of the system at `portOffset` (read once per offset; an empty state dir, so no running stack's options leak in). */
export function planEndpoints(portOffset: number): Endpoints {
  const cached = known.get(portOffset);
  if (cached) return cached;
  const stateDir = mkdtempSync(join(tmpdir(), 'cellsched-endpoints-'));
  const out = execFileSync('node', ['scripts/stack.mjs', 'endpoints', '--port-offset', String(portOffset), '--state-dir', stateDir], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const e = JSON.parse(out) as Endpoints;
  known.set(portOffset, e);
  return e;
}
