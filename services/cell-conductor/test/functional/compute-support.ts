// An in-process simulated compute for the functional tests (fault plan edited directly).
import type { ReportClient } from '@cellsched/placement-client';
import { startSimulatedCompute, type RunningCompute } from '../../../simulated-compute/src/app';
import { simulatedHosts, type SimulatedHost } from '../../../simulated-compute/src/domain/hosts';
import { logger } from './harness';

export interface TestCompute {
  running: RunningCompute;
  hosts: SimulatedHost[];
}

export async function startSimulatedComputeForTest(o: {
  url: string;
  report: ReportClient;
  cell: string;
  prefix: string;
  hosts: number;
}): Promise<TestCompute> {
  const hosts = simulatedHosts(o.cell, o.prefix, o.hosts);
  const running = await startSimulatedCompute({
    transportUrl: o.url,
    logger,
    cell: o.cell,
    processName: `${o.prefix}1`,
    hosts,
    resources: { vcpus: 4, memoryMb: 4096, localGb: 100 },
    traits: ['COMPUTE_NODE'],
    report: o.report,
    buildLatencyMs: 20,
    heartbeatIntervalMs: 500,
    prefetch: 16,
    faults: { rescheduleRate: 0, abortRate: 0, crashRate: 0, hang: false },
    seed: 7,
    controlPort: -1,
    crash: () => {
      throw new Error('crash fault is not used in-process');
    },
  });
  return { running, hosts };
}
