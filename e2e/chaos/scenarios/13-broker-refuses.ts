import { readFileSync } from 'node:fs';
import amqp from 'amqplib';
import { MAX_RETRIES, serverViews, Tally } from '../checks';
import type { ChaosContext, Scenario } from '../scenario';
import { expectAllRunning } from './03-outage-checks';

/** The queue a cell's compute process consumes, every `compute.<host>` key bound to it (from its ready log line). */
function poolQueue(ctx: ChaosContext, cell: string): string {
  const line = readFileSync(ctx.stack.logFile(`compute-${cell}`), 'utf8')
    .split('\n')
    .reverse()
    .find((l) => l.includes('"simulated compute ready"'));
  const queue = line === undefined ? undefined : (JSON.parse(line) as { queue?: string }).queue;
  if (queue === undefined) throw new Error(`compute-${cell} logged no queue`);
  return queue;
}

/** Binds or unbinds `compute.<host>` keys of a cell's pool queue, with the cell's own credentials: the broker then refuses (or routes again) casts to those hosts. */
async function setBindings(
  ctx: ChaosContext,
  cell: { name: string; transportUrl: string },
  hosts: readonly string[],
  bound: boolean,
): Promise<void> {
  const queue = poolQueue(ctx, cell.name);
  const conn = await amqp.connect(cell.transportUrl);
  try {
    const ch = await conn.createChannel();
    for (const h of hosts) {
      if (bound) await ch.bindQueue(queue, 'cellsched', `compute.${h}`);
      else await ch.unbindQueue(queue, 'cellsched', `compute.${h}`);
    }
  } finally {
    await conn.close();
  }
}

interface RefusedEvent {
  instance_uuid: string;
  host: string;
}

/** Build attempts whose cast the broker refused or whose host nobody served (recorded as that host's failure). */
async function refusedEvents(ctx: ChaosContext): Promise<RefusedEvent[]> {
  const out: RefusedEvent[] = [];
  for (const c of ctx.stack.topology().cells) {
    out.push(
      ...(await ctx.stack.query<RefusedEvent>(
        ctx.stack.adminUrl(`${ctx.stack.prefix}_${c.name}`),
        `
      SELECT a.instance_uuid::text, e.host FROM instance_actions a JOIN instance_actions_events e ON e.action_id = a.id
      WHERE e.event = 'compute__do_build_and_run_instance' AND e.result = 'Error'
        AND (e.details LIKE '%no compute serves host%' OR e.details LIKE '%is not served by any compute process%')`,
      )),
    );
  }
  return out;
}

/**
 * The broker refuses build casts: hosts whose services look alive (the scheduler keeps choosing
 * them) but that no queue serves — some host keys unbound for a few seconds, then a whole cell's
 * compute killed with every key unbound while it is down. Each refused cast is that host's
 * failure for the request: the build moves to its next alternate, or ends in ERROR (max retries,
 * the fault naming the host) when none is left; none waits in BUILD, nothing leaks.
 */
export const brokerRefuses: Scenario = {
  name: 'broker-refuses',
  summary:
    'the broker refuses build casts (host keys unbound, a compute down with its keys gone): builds move to alternates or end ERROR with a fault, none stuck',
  ci: true,
  timeoutMs: 150_000,
  async run(ctx) {
    await ctx.faults.set('all', { failRate: ctx.profile.name === 'soak' ? 0.45 : 0.3 });
    const cells = ctx.stack.topology().cells;
    const hostsOf = (cell: string): string[] => Array.from({ length: ctx.stack.shape.hostsPerCell }, (_, i) => `${cell}-compute-${i + 1}`);
    ctx.load.start({ rate: ctx.profile.name === 'ci' ? 5 : 10 });
    await ctx.wait(2000);
    const rounds = ctx.profile.name === 'ci' ? 1 : 3;
    for (let r = 0; r < rounds; r++) {
      const cell = ctx.rng.pick(cells);
      const victims = ctx.rng.shuffle(hostsOf(cell.name)).slice(0, ctx.rng.int(1, Math.max(1, ctx.stack.shape.hostsPerCell - 1)));
      const burst = ctx.boot(ctx.scale(40), { burst: 10 });
      await setBindings(ctx, cell, victims, false);
      const downMs = ctx.rng.int(3000, 8000);
      ctx.log(`round ${r + 1}: ${victims.join(',')} unbound (the broker refuses their casts) for ${downMs} ms`);
      await ctx.wait(downMs);
      await setBindings(ctx, cell, victims, true);
      await burst;
    }
    // a compute down and its keys gone with it: every cast to that cell's hosts is refused until it is back
    const cell = ctx.rng.pick(cells);
    const compute = `compute-${cell.name}`;
    await ctx.stack.kill(compute, 'SIGKILL');
    await setBindings(ctx, cell, hostsOf(cell.name), false);
    const downMs = ctx.rng.int(3000, 6000);
    ctx.log(`${compute} SIGKILLed and its ${ctx.stack.shape.hostsPerCell} host keys unbound for ${downMs} ms`);
    const during = await ctx.boot(ctx.scale(40), { burst: 10 });
    await ctx.wait(downMs);
    await ctx.stack.start(compute); // binds its keys again at start
    expectAllRunning(ctx, `after ${compute} came back`);
    await ctx.wait(2000);
    const ids = [...(await ctx.load.stop()), ...during];
    const left = await ctx.quiesce(90_000);
    ctx.expect(left.length === 0, `all settled (${left.length} still building)`);

    const refused = await refusedEvents(ctx);
    ctx.note('refusedCasts', refused.length);
    ctx.expect(refused.length > 0, `the broker refused some build casts (${refused.length}): the fault took effect`);
    const views = await serverViews(ctx, [...new Set(refused.map((e) => e.instance_uuid))]);
    const settled = new Tally('every server with a refused cast ended ACTIVE on a served host, or ERROR (max retries) with a fault');
    let movedOn = 0;
    for (const [id, s] of views) {
      const refusedHosts = refused.filter((e) => e.instance_uuid === id).map((e) => e.host);
      if (s.status === 'ACTIVE' && !refusedHosts.includes(s['OS-EXT-SRV-ATTR:host'] ?? '')) movedOn++;
      settled.check(
        (s.status === 'ACTIVE' && !refusedHosts.includes(s['OS-EXT-SRV-ATTR:host'] ?? '')) ||
          (s.status === 'ERROR' && (s.fault?.message ?? '').includes(MAX_RETRIES)),
        () => `${id}: ${s.status} on ${s['OS-EXT-SRV-ATTR:host'] ?? '-'} ${s.fault?.message ?? ''}`,
      );
    }
    settled.report(ctx);
    ctx.note('movedOnAfterRefusal', movedOn);
    ctx.log(`${refused.length} refused casts over ${views.size} servers; ${movedOn} ACTIVE on another host; ${ids.length} created`);
  },
};
