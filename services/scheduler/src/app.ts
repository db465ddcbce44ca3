/**
 * Composition of the scheduler from plain inputs: a pool on the API DB and, from its cell
 * mappings, one per cell DB (read only, followed as cells come and go), the placement client, the host cache, the advisory group lock, the domain core and its
 * gRPC binding. main.ts feeds it from config; tests and the benchmark feed it directly.
 */
import { atStartup, createPool } from '@cellsched/db';
import { startGrpcServer, type RunningGrpcServer } from '@cellsched/grpc';
import { PlacementClient } from '@cellsched/placement-client';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { AdvisoryGroupLock } from './adapters/advisory-group-lock';
import { CellDirectory } from './adapters/cell-sources';
import { systemClock } from './adapters/clock';
import { schedulerServiceBinding, type DecisionObserver } from './adapters/grpc/scheduler-service';
import { groupMemberHosts, instanceHosts } from './adapters/group-members';
import { HostCache } from './adapters/host-cache';
import { HostMappingCache, mappedHostsOnly } from './adapters/host-mappings';
import { CandidateCache } from './adapters/candidate-cache';
import { DecisionGate } from './adapters/decision-gate';
import { PlacementClaimer, placementCandidates } from './adapters/placement';
import type { SchedulerPolicy } from './domain/policy';
import { SchedulerCore } from './domain/select-destinations';
import type { HostStateSnapshot } from './ports';

/** What one scheduler replica needs. */
export interface SchedulerAppOptions {
  /** The API database, as the scheduler's read-only role; the cells are read from its cell_mapping_endpoints. */
  readonly apiDbUrl: string;
  /** The scheduler's read-only role on the cell DBs (the mappings' URLs carry no credentials). */
  readonly cellDbCredentials: { readonly user: string; readonly password: string };
  readonly placementAddresses: readonly string[];
  readonly placementDeadlineMs: number;
  readonly policy: SchedulerPolicy;
  readonly dbPoolSize: number;
  readonly hostCacheRefreshMs: number;
  readonly hostCacheFullResyncMs: number;
  /** Look-back of each incremental host-cache read (default 2 s). */
  readonly hostCacheOverlapMs?: number;
  readonly groupLockTimeoutMs: number;
  /** How long this replica reuses a candidates answer (0: ask placement every time). */
  readonly candidateCacheTtlMs: number;
  /** Age past which a cached answer is refreshed in the background (default: the TTL, no refresh ahead). */
  readonly candidateCacheRefreshMs?: number;
  /** Decisions this replica runs at once; the others wait their turn (default 16). */
  readonly maxConcurrentDecisions?: number;
  readonly logger: Logger;
  readonly observe?: DecisionObserver;
}

/** A running replica: its gRPC server, core and cache, and `close()` (graceful: in-flight calls finish, then pools close). */
export interface SchedulerApp {
  readonly server: RunningGrpcServer;
  readonly core: SchedulerCore;
  readonly cache: HostCache;
  /** The API DB's host mappings: a host without one (not discovered yet) is never chosen. */
  readonly mappings: HostMappingCache;
  readonly claimer: PlacementClaimer;
  readonly candidates: CandidateCache;
  /** The cells the host cache reads (from cell_mappings). */
  readonly cells: CellDirectory;
  close(): Promise<void>;
}

/** Runs `fn` every `ms` (one run at a time, the timer does not keep the process alive); returns the stop function. */
function refreshEvery(ms: number, fn: () => Promise<void>, onError: (err: unknown) => void): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    fn()
      .catch(onError)
      .finally(() => {
        running = false;
      });
  }, ms).unref();
  return () => clearInterval(timer);
}

/**
 * Builds a replica and listens on host:port (0: a free port). Loads the host cache in full before
 * serving, so the first request does not pay for it. Throws `scheduler.config.invalid` for a bad
 * policy (before opening anything) and whatever a database or bind failure throws (after closing
 * what it opened).
 */
export async function startSchedulerApp(o: SchedulerAppOptions, listen: { host: string; port: number }): Promise<SchedulerApp> {
  const pools: Pool[] = [];
  const pool = (url: string, name: string): Pool => {
    const p = createPool({
      url,
      max: o.dbPoolSize,
      applicationName: `scheduler-${name}`,
      onIdleError: (err) => o.logger.warn({ err }, 'idle db client error'),
    });
    pools.push(p);
    return p;
  };
  const placement = new PlacementClient({ addresses: o.placementAddresses, deadlineMs: o.placementDeadlineMs, logger: o.logger });
  let stopSweeper = (): void => undefined;
  let stopMappings = (): void => undefined;
  let cellDirectory: CellDirectory | undefined;
  const closeAll = async (): Promise<void> => {
    stopSweeper();
    stopMappings();
    placement.close();
    await Promise.all([...pools.map((p) => p.end().catch(() => undefined)), cellDirectory?.close()]);
  };
  try {
    const apiDb = pool(o.apiDbUrl, 'api');
    const directory = (cellDirectory = new CellDirectory({
      apiDb,
      credentials: o.cellDbCredentials,
      poolSize: o.dbPoolSize,
      logger: o.logger,
    }));
    const cache = new HostCache({
      apiDb,
      refreshMs: o.hostCacheRefreshMs,
      fullResyncMs: o.hostCacheFullResyncMs,
      ...(o.hostCacheOverlapMs === undefined ? {} : { overlapMs: o.hostCacheOverlapMs }),
      onRefreshError: (err) => o.logger.warn({ err }, 'host cache refresh failed: answering from the cache'),
      cells: directory,
    });
    const candidates = new CandidateCache(
      placementCandidates(placement),
      o.candidateCacheTtlMs,
      Date.now,
      o.candidateCacheRefreshMs ?? o.candidateCacheTtlMs,
    );
    const sweeper = setInterval(() => candidates.sweep(), 10_000).unref();
    stopSweeper = () => clearInterval(sweeper);
    const mappings = new HostMappingCache(apiDb, o.hostCacheFullResyncMs);
    const snapshot: HostStateSnapshot = {
      getAllocationCandidates: (q, opts) => candidates.get(q, opts),
      // NOTE: group members are looked up on the whole cache (a member on an unmapped host still counts)
      getComputeNodes: mappedHostsOnly((uuids) => cache.getComputeNodes(uuids), mappings),
      getAggregates: () => cache.getAggregates(),
      getGroupMemberHosts: groupMemberHosts(apiDb, placement, (uuids) => cache.getComputeNodes(uuids)),
      getInstanceHosts: instanceHosts(placement, (uuids) => cache.getComputeNodes(uuids)),
    };
    const claimer = new PlacementClaimer(placement, (c) => candidates.consume(c));
    const core = new SchedulerCore(
      { snapshot, claimer, groupLock: new AdvisoryGroupLock(pool(o.apiDbUrl, 'api-locks'), o.groupLockTimeoutMs), clock: systemClock },
      o.policy,
    );
    const gate = new DecisionGate(o.maxConcurrentDecisions ?? 16);
    await atStartup('host cache load', () => cache.refresh({ full: true }), o.logger);
    await atStartup('host mappings load', () => mappings.refresh({ full: true }), o.logger);
    stopMappings = refreshEvery(
      o.hostCacheRefreshMs,
      () => mappings.refresh(),
      (err) => o.logger.warn({ err }, 'host mappings refresh failed: answering from the copy'),
    );
    o.logger.info(
      { compute_nodes: cache.size, host_mappings: mappings.size, cells: directory.current().map((c) => c.name) },
      'host cache loaded',
    );
    const server = await startGrpcServer({
      host: listen.host,
      port: listen.port,
      services: [schedulerServiceBinding(core, o.observe, (work) => gate.run(work))],
      logger: o.logger,
    });
    let closing: Promise<void> | undefined;
    return {
      server,
      core,
      cache,
      mappings,
      claimer,
      candidates,
      cells: directory,
      close: () => (closing ??= server.shutdown().then(closeAll)),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
