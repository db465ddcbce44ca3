import { ConfigError, loadConfig, renderHelp, wantsHelp } from '@cellsched/config';
import { ReportClient } from '@cellsched/placement-client';
import { createLogger, keepHealthFile, loggerOptionsFrom, runMain, stopOnSignal } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { startSimulatedCompute } from './app';
import { simulatedComputeConfigSchema } from './config';
import { simulatedHosts } from './domain/hosts';

/** Composition root: config → hosts → cell bus + placement reports → consume; SIGTERM stops cleanly. */
async function main(): Promise<void> {
  if (wantsHelp(process.argv.slice(2))) {
    console.log(renderHelp(simulatedComputeConfigSchema, 'simulated-compute options'));
    return;
  }
  const c = loadConfig(simulatedComputeConfigSchema, { argv: process.argv.slice(2) });
  if (c.transportUrl === undefined) throw new ConfigError(['transportUrl is required'], 'config.invalid', 'simulated-compute');
  const processName = c.processName === '' ? `${c.hostPrefix}${c.firstHost}` : c.processName;
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,150}$/.test(processName) || !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,40}$/.test(c.cell)) {
    throw new ConfigError(
      [
        `processName ${JSON.stringify(processName)} and cell ${JSON.stringify(c.cell)} must be names of letters, digits, '.', '_', ':', '-'`,
      ],
      'config.invalid',
      'simulated-compute',
    );
  }
  const hostArchs = (pairs: readonly string[]): Record<string, string> => {
    const bad = pairs.filter((p) => !/^[^=\s]+=[A-Za-z0-9_]+$/.test(p));
    if (bad.length > 0) throw new ConfigError([`hostArchs: ${bad.join(', ')} is not host=arch`], 'config.invalid', 'simulated-compute');
    return Object.fromEntries(pairs.map((p) => p.split('=') as [string, string]));
  };
  const logger = createLogger(loggerOptionsFrom(c, { service: 'simulated-compute', host: hostname(), cell: c.cell }));
  const running = await startSimulatedCompute({
    transportUrl: c.transportUrl,
    logger,
    cell: c.cell,
    processName,
    placementConcurrency: c.placementConcurrency,
    hosts: simulatedHosts(c.cell, c.hostPrefix, c.hosts, c.firstHost, c.arch, hostArchs(c.hostArchs)),
    resources: {
      vcpus: c.vcpus,
      memoryMb: c.memoryMb,
      localGb: c.diskGb,
      reservedHostMemoryMb: c.reservedHostMemoryMb,
      cpuAllocationRatio: c.cpuAllocationRatio,
      ramAllocationRatio: c.ramAllocationRatio,
      diskAllocationRatio: c.diskAllocationRatio,
    },
    traits: c.traits,
    report: new ReportClient({ baseUrl: c.placementUrl }),
    buildLatencyMs: c.buildLatencyMs,
    ...(c.stepLatencyMs >= 0 ? { stepLatencyMs: c.stepLatencyMs } : {}),
    heartbeatIntervalMs: c.heartbeatIntervalMs,
    statsIntervalMs: c.statsIntervalMs,
    prefetch: c.prefetch,
    faults: { rescheduleRate: c.rescheduleRate, abortRate: c.abortRate, crashRate: 0, hang: false },
    seed: c.seed,
    controlPort: c.controlPort,
    crash: () => {
      logger.warn('crash fault: killing this process mid-build or mid-step');
      process.kill(process.pid, 'SIGKILL');
    },
  });
  if (running.controlPort !== undefined) console.log(JSON.stringify({ controlPort: running.controlPort }));
  const stopHealth = keepHealthFile(c.healthFile, running.connected);
  stopOnSignal(logger, async () => {
    stopHealth();
    await running.stop();
  });
}

runMain(main);
