// A compose deployment for one test file: its compose file generated from the plan
// (`pnpm stack compose --out ... --port-offset ...`) and run with docker-compose under its own
// project name, so it never touches a developer's deployment or `pnpm stack`. The images must
// exist (deploy/images/build.sh, or deploy/Dockerfile with a registry).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { planEndpoints, type Endpoints } from '../endpoints';

const run = promisify(execFile);
export const ROOT = join(__dirname, '../..');

/** One container as `docker inspect` sees it. */
export interface ContainerState {
  service: string;
  status: string;
  health: string;
  exitCode: number;
}

export class ComposeDeployment {
  readonly file: string;
  readonly endpoints: Endpoints;

  constructor(
    readonly project: string,
    readonly portOffset: number,
    planFlags: string[],
  ) {
    this.file = join(mkdtempSync(join(tmpdir(), `cellsched-${project}-`)), 'compose.yaml');
    execFileSync('node', ['scripts/stack.mjs', 'compose', ...planFlags, '--port-offset', String(portOffset), '--out', this.file], {
      cwd: ROOT,
      stdio: 'ignore',
    });
    this.endpoints = planEndpoints(portOffset);
  }

  /** `docker-compose -p <project> -f <file> ARGS`: its stdout; the output of both streams in the error when it fails. */
  async compose(args: string[], timeoutMs = 120_000): Promise<string> {
    try {
      return (
        await run('docker-compose', ['-p', this.project, '-f', this.file, ...args], {
          cwd: ROOT,
          encoding: 'utf8',
          timeout: timeoutMs,
          maxBuffer: 256 << 20,
        })
      ).stdout;
    } catch (e) {
      const x = e as { stdout?: string; stderr?: string; message: string };
      throw new Error(`docker-compose ${args.join(' ')} failed: ${x.message}\n${x.stdout ?? ''}${x.stderr ?? ''}`);
    }
  }

  async docker(args: string[], timeoutMs = 60_000): Promise<string> {
    return (await run('docker', args, { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 })).stdout;
  }

  /** Every container of the project (one-shot ones included) with its state and health. */
  async containers(): Promise<ContainerState[]> {
    const ids = (await this.compose(['ps', '-a', '-q'])).split('\n').filter(Boolean);
    if (ids.length === 0) return [];
    const fmt =
      '{{index .Config.Labels "com.docker.compose.service"}}|{{.State.Status}}|{{if .State.Health}}{{.State.Health.Status}}{{end}}|{{.State.ExitCode}}';
    return (await this.docker(['inspect', '-f', fmt, ...ids]))
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [service = '', status = '', health = '', code = '0'] = l.split('|');
        return { service, status, health, exitCode: Number(code) };
      });
  }

  /** The id of the service's container. */
  async containerId(service: string): Promise<string> {
    const id = (await this.compose(['ps', '-a', '-q', service])).trim();
    if (id === '') throw new Error(`no container for ${service}`);
    return id;
  }

  /** A service's output (`docker-compose logs`). */
  async logs(service: string): Promise<string> {
    return this.compose(['logs', '--no-color', '--no-log-prefix', service]);
  }

  /** Runs `node -e SCRIPT` in a running service's container; resolves its stdout. */
  async nodeIn(service: string, script: string): Promise<string> {
    return this.compose(['exec', '-T', service, 'node', '-e', script], 60_000);
  }

  /** Compute API as admin (microversion 2.62). */
  async api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const r = await fetch(`${this.endpoints.api}${path}`, {
      method,
      headers: { 'x-auth-token': 'admin', 'content-type': 'application/json', 'openstack-api-version': 'compute 2.62' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await r.text();
    return { status: r.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
  }

  /** Placement REST as admin (1.39); throws on a status other than 200. */
  async placement<T>(path: string): Promise<T> {
    const r = await fetch(`${this.endpoints.placement}${path}`, {
      headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' },
      signal: AbortSignal.timeout(30_000),
    });
    if (r.status !== 200) throw new Error(`placement GET ${path}: ${r.status}`);
    return (await r.json()) as T;
  }
}

/** Polls until `check` returns a value (not undefined) or the deadline passes. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 120_000, everyMs = 1000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
