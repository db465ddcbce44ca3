import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { buildHangs, faultPlanProblems, type FaultPlan } from '../domain/fault-plan';
import type { Guests } from '../domain/hosts';

/** The mutable fault state the control endpoint edits. */
export class FaultControl {
  private plan: FaultPlan;
  private waiters: { readonly hung: (p: FaultPlan) => boolean; readonly release: () => void }[] = [];

  constructor(initial: FaultPlan) {
    this.plan = initial;
  }

  current(): FaultPlan {
    return this.plan;
  }

  /** Applies a validated partial update (`steps` replaced whole); clearing a hang releases what it held. */
  update(u: Partial<FaultPlan>): FaultPlan {
    this.plan = Object.freeze({ ...this.plan, ...u });
    const still: typeof this.waiters = [];
    for (const w of this.waiters.splice(0)) w.hung(this.plan) ? still.push(w) : w.release();
    this.waiters.push(...still);
    return this.plan;
  }

  /** Resolves once `hung` is false of the plan (at once if it is now). */
  releasedWhen(hung: (p: FaultPlan) => boolean): Promise<void> {
    return hung(this.plan)
      ? new Promise((release) => {
          this.waiters.push({ hung, release });
        })
      : Promise.resolve();
  }

  /** Resolves once builds on `host` no longer hang. */
  released(host: string): Promise<void> {
    return this.releasedWhen((p) => buildHangs(p, host));
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return JSON.parse(text);
}

async function route(req: IncomingMessage, res: ServerResponse, control: FaultControl, guests: Guests): Promise<void> {
  if (req.url === '/faults' && req.method === 'GET') return send(res, 200, control.current());
  if (req.url === '/guests' && req.method === 'GET') return send(res, 200, guests.snapshot());
  if (req.url === '/guests/detail' && req.method === 'GET') return send(res, 200, guests.details());
  if (req.url === '/stats' && req.method === 'GET') return send(res, 200, guests.stats);
  if (req.url === '/faults' && (req.method === 'PUT' || req.method === 'PATCH')) {
    let body: unknown;
    try {
      body = await readJson(req);
    } catch {
      return send(res, 400, { error: 'body must be JSON' });
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return send(res, 400, { error: 'body must be a JSON object' });
    const problems = faultPlanProblems(body as Record<string, unknown>);
    if (problems.length > 0) return send(res, 400, { error: problems.join('; ') });
    return send(res, 200, control.update(body as Partial<FaultPlan>));
  }
  return send(res, 404, { error: 'GET /faults, PUT /faults, GET /guests, GET /guests/detail, GET /stats' });
}

/**
 * The loopback control endpoint: `GET /faults`, `PUT /faults` with any of
 * `{rescheduleRate, abortRate, crashRate, hang, steps}` (all-or-nothing validation, 400 lists every
 * problem), `GET /guests` (host → instance uuids this process runs), `GET /guests/detail` (host →
 * instance uuid → `{attempt, power, blockMigration?}`), `GET /stats`
 * (`{spawned, terminated}` guests since start). Binds 127.0.0.1 only.
 */
export async function startControlServer(port: number, control: FaultControl, guests: Guests): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    route(req, res, control, guests).catch(() => send(res, 500, { error: 'internal error' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr !== null ? addr.port : port };
}
