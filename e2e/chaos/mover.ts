// A background loop of server actions (moves and lifecycle actions) over the servers a scenario
// booted: each tick picks a server of the ledger, looks at it, and asks the API for an action its
// state allows (Nova's state table), or deletes it now and then. The soak mixes it into builds.
import type { MovedServer } from './move-checks';
import type { ChaosContext, Rng, ServerActionName } from './scenario';

/** One action the mover may ask: the body key and its args (undefined: Nova's minimal body), or a delete. */
export type MoverStep = { action: ServerActionName; args?: unknown } | { action: 'delete' };

/** Weighted choices per resting status (Nova's allowed vm_states per action). */
const CHOICES: Readonly<Record<string, readonly [number, (flavor: string) => MoverStep][]>> = {
  ACTIVE: [
    [4, () => ({ action: 'migrate' })],
    [4, (f) => ({ action: 'resize', args: { flavorRef: f === 'm1.small' ? '1' : '2' } })],
    [4, () => ({ action: 'os-migrateLive' })],
    [2, () => ({ action: 'os-stop' })],
    [1, () => ({ action: 'reboot', args: { type: 'SOFT' } })],
    [1, () => ({ action: 'reboot', args: { type: 'HARD' } })],
    [1, () => ({ action: 'rebuild' })],
    [2, () => ({ action: 'shelve' })],
    [1, () => ({ action: 'delete' })],
  ],
  SHUTOFF: [
    [3, () => ({ action: 'os-start' })],
    [2, () => ({ action: 'migrate' })],
    [1, (f) => ({ action: 'resize', args: { flavorRef: f === 'm1.small' ? '1' : '2' } })],
    [1, () => ({ action: 'shelve' })],
    [1, () => ({ action: 'delete' })],
  ],
  VERIFY_RESIZE: [
    [3, () => ({ action: 'confirmResize' })],
    [2, () => ({ action: 'revertResize' })],
    [1, () => ({ action: 'delete' })],
  ],
  SHELVED_OFFLOADED: [
    [4, () => ({ action: 'unshelve' })],
    [1, () => ({ action: 'delete' })],
  ],
  SHELVED: [
    [2, () => ({ action: 'shelveOffload' })],
    [2, () => ({ action: 'unshelve' })],
  ],
  ERROR: [[1, () => ({ action: 'delete' })]],
};

/** What to do with a server at rest in `status` with flavor `flavor` (undefined: nothing, it is busy or gone). Pure. */
export function pickStep(status: string, taskState: string | null, flavor: string, rng: Pick<Rng, 'next'>): MoverStep | undefined {
  const choices = CHOICES[status];
  if (choices === undefined || taskState !== null) return undefined;
  const total = choices.reduce((n, [w]) => n + w, 0);
  let x = rng.next() * total;
  for (const [w, make] of choices) {
    x -= w;
    if (x < 0) return make(flavor);
  }
  return choices[choices.length - 1]?.[1](flavor);
}

export interface MoverOptions {
  /** Actions per second. */
  rate: number;
  /** Servers to pick from (called each tick: the ledger's live ids). */
  candidates: () => string[];
}

/** The background action loop (≤ 16 in flight); `stop()` waits for what is in flight and returns the counts by step. */
export class Mover {
  private loop: Promise<void> | undefined;
  private stopping = false;
  readonly asked: Record<string, number> = {};
  /** The API's answers: `<action> <status>` → count (status 0: the request failed). */
  readonly answers: Record<string, number> = {};
  constructor(
    private readonly ctx: ChaosContext,
    private readonly rng: Rng,
  ) {}

  get running(): boolean {
    return this.loop !== undefined;
  }

  start(o: MoverOptions): void {
    if (this.loop) throw new Error('mover already running');
    this.stopping = false;
    const inflight = new Set<Promise<void>>();
    const busy = new Set<string>();
    this.loop = (async () => {
      while (!this.stopping) {
        const free = o.candidates().filter((id) => !busy.has(id));
        if (inflight.size < 16 && free.length > 0) {
          const id = this.rng.pick(free);
          busy.add(id);
          const p = this.one(id)
            .catch((e: unknown) => this.ctx.log(`mover: ${id}: ${(e as Error).message}`))
            .finally(() => busy.delete(id));
          inflight.add(p);
          void p.finally(() => inflight.delete(p));
        }
        await new Promise((r) => setTimeout(r, 1000 / o.rate));
      }
      await Promise.all(inflight);
    })();
  }

  private async one(id: string): Promise<void> {
    const g = await this.ctx.stack.api<{ server?: MovedServer }>('GET', `/servers/${id}`);
    const s = g.body?.server;
    if (g.status !== 200 || s === undefined) return;
    const step = pickStep(s.status, s['OS-EXT-STS:task_state'] ?? null, s.flavor?.original_name ?? '', this.rng);
    if (step === undefined) return;
    this.asked[step.action] = (this.asked[step.action] ?? 0) + 1;
    const status = step.action === 'delete' ? await this.ctx.deleteServer(id) : (await this.ctx.act(id, step.action, step.args)).status;
    const key = `${step.action} ${status}`;
    this.answers[key] = (this.answers[key] ?? 0) + 1;
  }

  async stop(): Promise<Record<string, number>> {
    this.stopping = true;
    await this.loop;
    this.loop = undefined;
    return this.asked;
  }
}
