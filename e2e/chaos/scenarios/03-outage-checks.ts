// Checks and steps shared by the process-kill and outage scenarios (03-08, 11, 12, 17): which
// services died that the scenario did not kill, whether an outage turned builds into wrong
// outcomes; the failing background load they run under, and a kill-and-restart round.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NO_VALID_HOST, serverViews, Tally, type ServerView } from '../checks';
import type { ChaosContext } from '../scenario';

const run = promisify(execFile);

/**
 * Every service of the stack is running, except `allowedDown`. The runner restarts whatever a
 * scenario left stopped before it checks invariants, so a service that crashed on an outage
 * (and did not reconnect) would go unnoticed without this check.
 */
export function expectAllRunning(ctx: ChaosContext, why: string, allowedDown: readonly string[] = []): void {
  const down = ctx.stack.services().filter((s) => !allowedDown.includes(s) && !ctx.stack.isRunning(s));
  ctx.expect(down.length === 0, `no service crashed ${why}${down.length ? `: ${down.join(', ')} not running` : ''}`);
}

/**
 * Reschedulable build failures on every host (`failRate`; the soak 0.45: its summary must show
 * >= 30% of builds failing), then the background load (`rate` builds/s, twice that but in ci);
 * returns `settleMs` later, builds under way.
 */
export async function startFailingLoad(ctx: ChaosContext, failRate: number, rate: number, settleMs = 2000): Promise<void> {
  await ctx.faults.set('all', { failRate: ctx.profile.name === 'soak' ? 0.45 : failRate });
  ctx.load.start({ rate: ctx.profile.name === 'ci' ? rate : 2 * rate });
  await ctx.wait(settleMs);
}

/** Stops the background load; the number of servers it created goes in the report (`loadCreated`). Returns their ids. */
export async function stopLoad(ctx: ChaosContext): Promise<string[]> {
  const ids = await ctx.load.stop();
  ctx.note('loadCreated', ids.length);
  return ids;
}

/**
 * SIGKILLs `victim`, keeps it down 1-5 s (the run's seed draws it), starts it again; then no
 * service may be down. `round` and `held` (what it held when killed) go in the log.
 */
export async function killAndRestart(ctx: ChaosContext, victim: string, round: number, held: string): Promise<void> {
  await ctx.stack.kill(victim, 'SIGKILL');
  const downMs = ctx.rng.int(1000, 5000);
  ctx.log(`round ${round}: ${victim} SIGKILLed with ${held}; down ${downMs} ms`);
  await ctx.wait(downMs);
  await ctx.stack.start(victim);
  expectAllRunning(ctx, `after ${victim} was SIGKILLed and restarted`);
}

/**
 * None of these servers ended in ERROR with NoValidHost: the cloud had room, so a NoValidHost
 * can only be the outage mistaken for "no capacity" (a lost database read taken as "no hosts").
 */
export async function expectNoSpuriousNoValidHost(
  ctx: ChaosContext,
  ids: readonly string[],
  why: string,
): Promise<Map<string, ServerView>> {
  const views = await serverViews(ctx, ids);
  const t = new Tally(`no build ended NoValidHost because of ${why} (the cloud had room)`);
  for (const id of ids) {
    const s = views.get(id);
    t.check(!(s?.status === 'ERROR' && (s.fault?.message ?? '').startsWith(NO_VALID_HOST)), () => `${id}: "${s?.fault?.message ?? ''}"`);
  }
  t.report(ctx);
  return views;
}

/** The cell of a simulated host name (`cell2-compute-3` → `cell2`). */
export function cellOfHost(host: string | null | undefined): string | undefined {
  return host ? /^(cell\d+)-/.exec(host)?.[1] : undefined;
}

/** ACTIVE servers per cell among `ids` (by their host's name). */
export async function activeByCell(ctx: ChaosContext, ids: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const s of (await serverViews(ctx, ids)).values()) {
    if (s.status !== 'ACTIVE') continue;
    const cell = cellOfHost(s['OS-EXT-SRV-ATTR:host']) ?? '?';
    out[cell] = (out[cell] ?? 0) + 1;
  }
  return out;
}

/** Runs a broker or database admin command (rabbitmqctl, pg_ctlcluster); throws with its output on failure. */
export async function admin(cmd: string, args: readonly string[], timeoutMs = 60_000): Promise<string> {
  try {
    const r = await run(cmd, [...args], { encoding: 'utf8', timeout: timeoutMs });
    return r.stdout;
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${x.message} ${x.stderr ?? ''}`);
  }
}

/** Polls `url` until it answers (any HTTP status) or `timeoutMs` passes; true when it answered. */
export async function answers(url: string, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return false;
}
