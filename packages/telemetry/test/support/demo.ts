// Builds and runs the trace demo (test/trace-demo) in a child node process, the way a
// service runs: `node --require ./dist/tracing.js ./dist/demo.js`.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testInfra } from '@cellsched/config';

const run = promisify(execFile);
const ROOT = join(__dirname, '../../../..');
const DEMO = join(__dirname, '../trace-demo');

/** Compiles the demo and the libraries it references (`tsc -b`). */
export function buildDemo(): void {
  execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-b', DEMO], { cwd: ROOT, stdio: 'pipe', timeout: 180_000 });
}

/** A private RabbitMQ vhost for one test file, deleted by `dispose`. */
export async function privateVhost(prefix: string): Promise<{ url: string; dispose(): Promise<void> }> {
  const base = new URL(testInfra().amqpUrl);
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await run('rabbitmqctl', ['add_vhost', name], { timeout: 60_000 });
  await run('rabbitmqctl', ['set_permissions', '-p', name, decodeURIComponent(base.username), '.*', '.*', '.*'], { timeout: 60_000 });
  base.pathname = `/${encodeURIComponent(name)}`;
  return {
    url: base.toString(),
    dispose: async () => {
      await run('rabbitmqctl', ['delete_vhost', name], { timeout: 60_000 });
    },
  };
}

/** Runs the demo; resolves with its stdout (pino JSON lines). Rejects on a non-zero exit. */
export async function runDemo(target: string, amqpUrl: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--require', './dist/tracing.js', './dist/demo.js', target, amqpUrl], {
    cwd: DEMO,
    timeout: 60_000,
  });
  return stdout;
}

/** The trace-tail CLI running as an OTLP/HTTP receiver on a free port. */
export interface TraceTail {
  endpoint: string;
  /** Sends SIGINT (the CLI prints what it still holds) and resolves with all it printed. */
  stop(): Promise<string>;
}

/** The trace-tail CLI (built by {@link buildDemo}). */
export const TRACE_TAIL = join(ROOT, 'packages/telemetry/dist/bin/trace-tail.js');

/** Starts `trace-tail --listen 127.0.0.1:0` (built by {@link buildDemo}), with `extra` options. */
export function startTraceTail(extra: string[] = []): Promise<TraceTail> {
  const child = spawn(process.execPath, [TRACE_TAIL, '--listen', '127.0.0.1:0', '--quiet-ms', '200', ...extra]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGINT');
    await exited;
    return stdout;
  };
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      const m = /listening on (http:\/\/[^/]+)\/v1\/traces/.exec(stderr);
      if (m?.[1]) resolve({ endpoint: m[1], stop });
    });
    void exited.then(() => reject(new Error(`trace-tail exited early: ${stderr}`)));
  });
}

/** Runs the idle demo until "ready", sends SIGTERM, resolves with how it exited and how long that took. */
export async function signalIdle(
  endpoint: string,
  mode: 'default' | 'own-handler',
): Promise<{ code: number | null; signal: string | null; ms: number }> {
  const child = spawn(process.execPath, ['--require', './dist/tracing.js', './dist/idle.js', endpoint, mode], { cwd: DEMO });
  const exited = new Promise<[number | null, string | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      if (c.toString('utf8').includes('ready')) resolve();
    });
    void exited.then(() => reject(new Error('idle demo exited before it was ready')));
  });
  const t0 = Date.now();
  child.kill('SIGTERM');
  const [code, signal] = await exited;
  return { code, signal, ms: Date.now() - t0 };
}

/** Runs the story demo (test/trace-demo/src/story.ts) with the story sampler; resolves with its stdout (pino JSON lines). */
export async function runStory(target: string, amqpUrl: string, serverUuid: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ['--require', './dist/story-tracing.js', './dist/story.js', target, amqpUrl, testInfra().pgAdminUrl, serverUuid],
    {
      cwd: DEMO,
      timeout: 60_000,
    },
  );
  return stdout;
}
