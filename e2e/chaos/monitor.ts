// What the invariant checker cannot see at quiescence alone, sampled during the whole run:
// - every TCP connection to PostgreSQL and RabbitMQ, joined to the process that owns it
//   (`ss -tnp` client port → pid → service via the stack's pid files) and to what it is
//   connected to (pg_stat_activity: database + role; `rabbitmqctl list_connections`: vhost +
//   user), so "a cell process connected to the API vhost or API DB" is seen with who did it;
// - placement usage against capacity (one SQL query on placement's database), so "ever over
//   capacity" is checked between the quiescent checks too.
// Connections live as long as the services' pools, so a sample every 2 s (broker every 4 s)
// sees each of them; a connection opened and closed between two samples could be missed,
// which is why the checker also proves the cell processes *cannot* connect (credentials,
// permissions and their environment).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ChaosStack } from './stack';
import { parseSocketOwners } from './util';

const run = promisify(execFile);

export interface Violation {
  at: number;
  what: string;
}

/** The cell of a cell-level process (cell conductor or compute), else undefined. */
function cellOf(service: string): string | undefined {
  const m = /^(?:cell-conductor|compute)-(cell\d+)$/.exec(service);
  return m?.[1];
}

export class Monitor {
  readonly isolation: Violation[] = [];
  readonly capacity: Violation[] = [];
  samples = { pg: 0, amqp: 0, capacity: 0, errors: 0 };
  lastError: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  private busy = false;

  constructor(private readonly stack: ChaosStack) {}

  start(periodMs = 2000): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      this.sample(this.tick++ % 2 === 0)
        .catch((e: unknown) => {
          this.samples.errors++;
          this.lastError = (e as Error).message;
        })
        .finally(() => {
          this.busy = false;
        });
    }, periodMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    while (this.busy) await new Promise((r) => setTimeout(r, 50));
  }

  /** Clears findings (between scenarios); returns what was found. */
  take(): { isolation: Violation[]; capacity: Violation[]; samples: Monitor['samples'] } {
    const out = { isolation: this.isolation.splice(0), capacity: this.capacity.splice(0), samples: { ...this.samples } };
    this.samples = { pg: 0, amqp: 0, capacity: 0, errors: 0 };
    return out;
  }

  /** One sample now (also used by the checker at quiescence). */
  async sample(withBroker: boolean): Promise<void> {
    const procs = this.processes();
    const ports = await socketOwners();
    await this.samplePg(procs, ports);
    if (withBroker) await this.sampleAmqp(procs, ports);
    await this.sampleCapacity();
  }

  /** pid → service name of the stack's running processes. */
  private processes(): Map<number, string> {
    const m = new Map<number, string>();
    for (const s of this.stack.services()) {
      const pid = this.stack.pid(s);
      if (pid !== undefined) m.set(pid, s);
    }
    return m;
  }

  private get apiRole(): string {
    return `${this.stack.prefix}_api`;
  }

  private async samplePg(procs: Map<number, string>, ports: Map<string, number>): Promise<void> {
    const rows = await this.stack.query<{ datname: string | null; usename: string | null; client_port: number | null }>(
      this.stack.adminUrl(),
      "SELECT datname, usename, client_port FROM pg_stat_activity WHERE backend_type = 'client backend' AND client_port IS NOT NULL AND client_port > 0",
    );
    this.samples.pg++;
    const prefix = `${this.stack.prefix}_`;
    for (const r of rows) {
      if (r.datname === null || !r.datname.startsWith(prefix)) continue;
      const pid = ports.get(`5432:${Number(r.client_port)}`);
      const service = pid === undefined ? undefined : procs.get(pid);
      const who = service ?? (pid === undefined ? 'an unknown process' : `pid ${pid}`);
      const cell = service === undefined ? undefined : cellOf(service);
      // API-level services (api, super-conductor, schedulers) have their own roles there; a cell process or a cell role never
      if (r.datname === this.apiRole && (cell !== undefined || /_cell\d+$/.test(r.usename ?? ''))) {
        this.isolation.push({ at: Date.now(), what: `${who} connected to the API database as ${r.usename}` });
        continue;
      }
      if (service !== undefined && cell !== undefined) {
        if (service.startsWith('compute-'))
          this.isolation.push({
            at: Date.now(),
            what: `${service} (no DB credentials expected) connected to database ${r.datname} as ${r.usename}`,
          });
        else if (r.datname !== `${prefix}${cell}`)
          this.isolation.push({
            at: Date.now(),
            what: `${service} connected to database ${r.datname} as ${r.usename} (only ${prefix}${cell} allowed)`,
          });
      }
    }
  }

  private async sampleAmqp(procs: Map<number, string>, ports: Map<string, number>): Promise<void> {
    let out: string;
    try {
      out = (await run('rabbitmqctl', ['-q', 'list_connections', 'vhost', 'user', 'peer_port'], { encoding: 'utf8', timeout: 20_000 }))
        .stdout;
    } catch (e) {
      this.samples.errors++;
      this.lastError = `rabbitmqctl: ${(e as Error).message.split('\n')[0]}`;
      return;
    }
    this.samples.amqp++;
    const prefix = `${this.stack.prefix}_`;
    for (const line of out.split('\n')) {
      const [vhost, user, port] = line.trim().split('\t');
      if (vhost === undefined || user === undefined || port === undefined || !vhost.startsWith(prefix)) continue;
      const pid = ports.get(`5672:${Number(port)}`);
      const service = pid === undefined ? undefined : procs.get(pid);
      const cell = service === undefined ? undefined : cellOf(service);
      if (vhost === this.apiRole && (cell !== undefined || /_cell\d+$/.test(user))) {
        this.isolation.push({ at: Date.now(), what: `${service ?? `peer port ${port}`} connected to the API vhost as ${user}` });
      } else if (cell !== undefined && vhost !== `${prefix}${cell}`) {
        this.isolation.push({ at: Date.now(), what: `${service} connected to vhost ${vhost} as ${user} (only ${prefix}${cell} allowed)` });
      }
    }
  }

  private async sampleCapacity(): Promise<void> {
    const over = await this.stack.query<{ provider: string; rc: string; used: string; capacity: string }>(
      this.stack.adminUrl(`${this.stack.prefix}_placement`),
      `
      SELECT rp.name AS provider, rc.name AS rc, u.used::text AS used, ((i.total - i.reserved) * i.allocation_ratio)::text AS capacity
      FROM (SELECT resource_provider_id, resource_class_id, sum(used) AS used FROM allocations GROUP BY 1, 2) u
      JOIN inventories i USING (resource_provider_id, resource_class_id)
      JOIN resource_providers rp ON rp.id = u.resource_provider_id
      JOIN resource_classes rc ON rc.id = u.resource_class_id
      WHERE u.used > (i.total - i.reserved) * i.allocation_ratio`,
    );
    this.samples.capacity++;
    for (const o of over) this.capacity.push({ at: Date.now(), what: `${o.provider} ${o.rc}: used ${o.used} > capacity ${o.capacity}` });
  }
}

/** `<server port>:<client port>` → pid for every established connection to PostgreSQL (5432) or RabbitMQ (5672). */
async function socketOwners(): Promise<Map<string, number>> {
  const { stdout } = await run('ss', ['-tnpH', 'state', 'established', '( dport = :5432 or dport = :5672 )'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return parseSocketOwners(stdout);
}
