// A simulated-compute process a scenario runs itself, outside the stack's services table: a
// host that joins a cell, dies for good, or comes back with fewer hosts.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ChaosContext } from './scenario';
import { ROOT } from './stack';

/** The last `{"controlPort":N}` the process logged after byte `from`. */
function controlPortIn(log: string, from: number): number | undefined {
  if (!existsSync(log)) return undefined;
  let port: number | undefined;
  for (const m of readFileSync(log)
    .subarray(from)
    .toString('utf8')
    .matchAll(/\{"controlPort":(\d+)\}/g))
    port = Number(m[1]);
  return port;
}

/**
 * One more simulated-compute process in `cell`, simulating `hosts` hosts named from `host` on
 * (`cell1-extra-1`, `cell1-extra-2`, ...). Its process name (and so its queue) is the first
 * host's, the same on every start: `start(n)` with a smaller `n` is that process restarted
 * with fewer hosts. The scenario owns it (and must stop it).
 */
export class ExtraCompute {
  child: ChildProcess | undefined;
  port: number | undefined;
  readonly log: string;
  private readonly prefix: string;
  private readonly first: number;

  constructor(
    private readonly ctx: ChaosContext,
    private readonly cell: { name: string; transportUrl: string },
    readonly host: string,
    private hosts = 1,
  ) {
    this.log = join(ctx.stack.stateDir, `compute-${host}.log`);
    this.prefix = host.replace(/\d+$/, '');
    this.first = Number(host.slice(this.prefix.length));
  }

  /** Whether its process is alive. */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The host names it simulates now. */
  get hostNames(): string[] {
    return Array.from({ length: this.hosts }, (_, i) => `${this.prefix}${this.first + i}`);
  }

  /** Starts the process (with `hosts` hosts this time, if given) and waits until all its hosts are ready. */
  async start(hosts = this.hosts): Promise<void> {
    this.hosts = hosts;
    const from = existsSync(this.log) ? statSync(this.log).size : 0;
    const out = openSync(this.log, 'a');
    this.child = spawn('node', ['--require', './services/simulated-compute/dist/tracing.js', 'services/simulated-compute/dist/main.js'], {
      cwd: ROOT,
      stdio: ['ignore', out, out],
      env: {
        ...process.env,
        CELLSCHED_CELL_NAME: this.cell.name,
        CELLSCHED_CELL_TRANSPORT_URL: this.cell.transportUrl,
        CELLSCHED_PLACEMENT_URL: this.ctx.stack.placementUrl,
        CELLSCHED_COMPUTE_HOSTS: String(hosts),
        CELLSCHED_COMPUTE_HOST_PREFIX: this.prefix,
        CELLSCHED_COMPUTE_FIRST_HOST: String(this.first),
        CELLSCHED_COMPUTE_CONTROL_PORT: '0',
        CELLSCHED_BUILD_LATENCY_MS: String(this.ctx.stack.shape.buildLatencyMs),
        CELLSCHED_COMPUTE_SEED: String(this.ctx.seed),
      },
    });
    closeSync(out);
    this.port = await this.ctx.waitFor(
      `${this.host} ready`,
      () => {
        if (this.child?.exitCode !== null) throw new Error(`${this.host} exited at start; see ${this.log}`);
        return Promise.resolve(controlPortIn(this.log, from));
      },
      60_000 + 200 * hosts,
    );
  }

  async faults(body: Record<string, unknown>): Promise<void> {
    const r = await fetch(`http://127.0.0.1:${this.port}/faults`, {
      method: 'PUT',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    if (r.status !== 200) throw new Error(`${this.host} PUT /faults: ${r.status}`);
  }

  async guests(): Promise<string[]> {
    const r = await fetch(`http://127.0.0.1:${this.port}/guests`);
    return Object.values((await r.json()) as Record<string, string[]>).flat();
  }

  async stop(signal: NodeJS.Signals): Promise<void> {
    const c = this.child;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill(signal);
    if (signal === 'SIGKILL') this.ctx.stack.recordKill(`compute-${this.host}`, signal, c.pid);
    await Promise.race([gone, new Promise((r) => setTimeout(r, 15_000))]);
    if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}
