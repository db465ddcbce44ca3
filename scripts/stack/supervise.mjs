// Supervision of `pnpm stack`'s processes: each runs detached from the launcher, with its pid
// and log in the state dir (<name>.pid, <name>.log); up is its ready check answering.
import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const tcpOpen = (addr) =>
  new Promise((res) => {
    const [host, port] = addr.split(':');
    const sock = connect({ host, port: Number(port) }, () => {
      sock.destroy();
      res(true);
    });
    sock.on('error', () => res(false));
    sock.setTimeout(1000, () => {
      sock.destroy();
      res(false);
    });
  });

/** Where a row answers, for the launcher's output. */
export const where = (s) => s.ready.http ?? (s.ready.tcp ? `grpc://${s.ready.tcp}` : '-');

/** The processes of the rows of one state dir, started with `cwd` `root`. */
export function supervisor(stateDir, root) {
  const pidFile = (s) => join(stateDir, `${s.name}.pid`);
  const logFile = (s) => join(stateDir, `${s.name}.log`);

  /** The pid of the row's process while it runs. */
  function runningPid(s) {
    if (!existsSync(pidFile(s))) return undefined;
    const pid = Number(readFileSync(pidFile(s), 'utf8'));
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  /** Whether a row answers: HTTP below 500, a TCP port open, or its ready line in its log (since byte `from`). */
  async function healthy(s, from = 0) {
    const r = s.ready;
    if (r.http) {
      try {
        return (await fetch(r.http)).status < 500;
      } catch {
        return false;
      }
    }
    if (r.tcp) return tcpOpen(r.tcp);
    if (!existsSync(logFile(s))) return false;
    return readFileSync(logFile(s)).subarray(from).includes(r.log);
  }

  /** Waits until row `s`'s process no longer runs (`ms` at most); whether it is gone. */
  async function gone(s, ms, pollMs) {
    const deadline = Date.now() + ms;
    while (runningPid(s) && Date.now() < deadline) await sleep(pollMs);
    return !runningPid(s);
  }

  /**
   * Starts row `s` unless it runs (`prepare()` first: database, build) and waits for its ready
   * check; throws when something else answers on its address, or it exits or is not ready in time.
   * CELLSCHED_NODE_ARGS: extra node flags for every service (e.g. `--cpu-prof --cpu-prof-dir=DIR`, which Node refuses in NODE_OPTIONS).
   */
  async function start(s, prepare) {
    if (runningPid(s)) {
      console.log(`${s.name}: already running (pid ${runningPid(s)})`);
      return;
    }
    if ((s.ready.http || s.ready.tcp) && (await healthy(s))) throw new Error(`${s.name}: something else already answers on ${where(s)}`);
    await prepare();
    const from = existsSync(logFile(s)) ? statSync(logFile(s)).size : 0;
    const out = openSync(logFile(s), 'a');
    const [cmd, args] = s.cmd;
    const nodeArgs = cmd === 'node' ? (process.env.CELLSCHED_NODE_ARGS ?? '').split(' ').filter(Boolean) : [];
    const child = spawn(cmd, [...nodeArgs, ...args], {
      cwd: root,
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...process.env, ...s.env() },
    });
    writeFileSync(pidFile(s), String(child.pid));
    child.unref();
    const limitMs = s.readyTimeoutMs ?? 60_000;
    const deadline = Date.now() + limitMs;
    while (!(await healthy(s, from))) {
      if (!runningPid(s)) throw new Error(`${s.name} exited during start; see ${logFile(s)}`);
      if (Date.now() > deadline) throw new Error(`${s.name} not healthy after ${Math.round(limitMs / 1000)} s; see ${logFile(s)}`);
      await sleep(200);
    }
    console.log(`${s.name}: up (pid ${child.pid}) ${where(s)} log ${logFile(s)}`);
  }

  /** Stops row `s`: SIGTERM, SIGKILL after 10 s; forgets its pid file. */
  async function stop(s) {
    const pid = runningPid(s);
    if (pid) {
      process.kill(pid, 'SIGTERM');
      if (!(await gone(s, 10_000, 100))) process.kill(pid, 'SIGKILL');
      console.log(`${s.name}: stopped (pid ${pid})`);
    } else if (!s.system || existsSync(pidFile(s))) console.log(`${s.name}: not running`);
    rmSync(pidFile(s), { force: true });
  }

  /** Sends `signal` to row `s`'s process and waits (15 s at most) until it is gone. */
  async function signal(s, sig) {
    const pid = runningPid(s);
    if (!pid) {
      console.log(`${s.name}: not running`);
      return;
    }
    process.kill(pid, sig);
    const ok = await gone(s, 15_000, 50);
    console.log(`${s.name}: ${sig} (pid ${pid})${ok ? ', gone' : ', STILL RUNNING after 15 s'}`);
  }

  return { logFile, runningPid, healthy, start, stop, signal };
}
