// One cell for a functional test file: its database, its bus (a vhost of its own), a real
// placement child process, the cell conductor in-process and in-process simulated computes.
import { randomUUID } from 'node:crypto';
import type { TestDatabase } from '@cellsched/db';
import { PlacementClient, ReportClient } from '@cellsched/placement-client';
import type { Selection } from '@cellsched/wire';
import type { Logger } from 'pino';
import { startCellConductor, type RunningCellConductor } from '../../src/app';
import { startSimulatedComputeForTest, type TestCompute } from './compute-support';
import { Bus, buildServices, createCellDb, createVhost, logger, selectionFor, startPlacement, type PlacementProcess } from './harness';

export interface CellFixtureOptions {
  /** Names the vhost (`<vhostPrefix>-<random>`). */
  readonly vhostPrefix: string;
  /** The bus's logger (cast handlers log through it). Default: silent. */
  readonly busLogger?: Logger;
  /** Builds placement and the simulated compute first (for child processes). */
  readonly build?: boolean;
}

/** A running cell; `stop()` undoes everything, computes included. */
export class CellFixture {
  readonly cellUuid = randomUUID();
  readonly computes: TestCompute[] = [];

  private constructor(
    readonly cellDb: TestDatabase,
    readonly vhost: Awaited<ReturnType<typeof createVhost>>,
    readonly placementProc: PlacementProcess,
    readonly placement: PlacementClient,
    readonly report: ReportClient,
    readonly bus: Bus,
    private conductorRef: RunningCellConductor | undefined,
  ) {}

  static async start(o: CellFixtureOptions): Promise<CellFixture> {
    if (o.build === true) buildServices();
    const [cellDb, vhost, placementProc] = await Promise.all([createCellDb(), createVhost(o.vhostPrefix), startPlacement()]);
    const placement = new PlacementClient({ addresses: [placementProc.grpcAddress], deadlineMs: 10_000 });
    const report = new ReportClient({ baseUrl: placementProc.restUrl });
    const bus = await Bus.connect({ url: vhost.url, logger: o.busLogger ?? logger });
    const cell = new CellFixture(cellDb, vhost, placementProc, placement, report, bus, undefined);
    cell.conductorRef = await startCellConductor({
      pool: cellDb.pool,
      bus,
      placement,
      logger,
      cellUuid: cell.cellUuid,
      buildTimeoutMs: 60_000,
      prefetch: 8,
      serviceDownTimeMs: 60_000,
      watchdogIntervalMs: 0,
      report,
      auditIntervalMs: 0,
      auditGraceMs: 1000,
    });
    return cell;
  }

  get conductor(): RunningCellConductor {
    if (this.conductorRef === undefined) throw new Error('the cell conductor is not running');
    return this.conductorRef;
  }

  /** Starts an in-process simulated compute of `hosts` hosts named `<prefix>1`... in this cell. */
  async addCompute(prefix: string, hosts: number): Promise<TestCompute> {
    const c = await startSimulatedComputeForTest({ url: this.vhost.url, report: this.report, cell: 'c1', prefix, hosts });
    this.computes.push(c);
    return c;
  }

  /** The Selection the scheduler would give for host `i` of `c` (1-vCPU flavor). */
  sel(c: TestCompute, i: number): Selection {
    const h = c.hosts[i];
    if (h === undefined) throw new Error('no such host');
    return selectionFor(h.host, h.computeNodeUuid, this.cellUuid);
  }

  async stop(): Promise<void> {
    for (const c of this.computes) await c.running.stop();
    await this.conductorRef?.stop();
    await this.bus.close();
    this.placement.close();
    await this.placementProc.stop();
    await this.cellDb.drop();
    await this.vhost.dispose();
  }
}
