/**
 * A description of the machine a benchmark ran on (goes into the JSON and the table).
 */
import { execFileSync } from 'node:child_process';
import { cpus, freemem, loadavg, release, totalmem } from 'node:os';

/** CPU, memory, kernel, runtime and PostgreSQL version, load at the start. */
export function describeMachine(pgVersion: string): Record<string, string | number> {
  const cpu = cpus();
  let os = release();
  try {
    os = execFileSync('sh', ['-c', '. /etc/os-release && echo "$PRETTY_NAME"'], { encoding: 'utf8' }).trim() + ` (kernel ${release()})`;
  } catch {
    // keep the kernel release only
  }
  return {
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    free_memory_gb: Math.round(freemem() / 2 ** 30),
    os,
    node: process.version,
    postgresql: pgVersion,
    load_average_at_start: loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
  };
}
