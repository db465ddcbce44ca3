import type { InstanceFault, VmStateName } from '@cellsched/cell-db';
import type { Flavor } from '@cellsched/wire';

/**
 * A server as the API shows it, whatever it was read from: a BuildRequest (not in a cell
 * yet), a cell's instances row, or only its InstanceMapping when its cell is down.
 */
export interface ServerRecord {
  readonly uuid: string;
  readonly projectId: string;
  readonly userId: string;
  readonly name: string;
  readonly flavor: Flavor | undefined;
  readonly imageRef: string;
  /** `unknown`: the server's cell did not answer (only the mapping was read). */
  readonly vmState: VmStateName | 'unknown';
  readonly taskState: string | null;
  readonly powerState: number;
  readonly host: string | null;
  readonly node: string | null;
  readonly availabilityZone: string | null;
  readonly launchedAt: Date | null;
  readonly terminatedAt: Date | null;
  readonly reservationId: string | null;
  readonly launchIndex: number;
  readonly hostname: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly fault: InstanceFault | undefined;
  /** Where it was read from (for tests and logs). */
  readonly source: 'build_request' | 'cell' | 'mapping';
}

/** Nova's sort for lists: created_at desc, then uuid desc (total, the same in every cell). Pure. */
export function compareServers(a: Pick<ServerRecord, 'createdAt' | 'uuid'>, b: Pick<ServerRecord, 'createdAt' | 'uuid'>): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.uuid < b.uuid ? 1 : a.uuid > b.uuid ? -1 : 0;
}
