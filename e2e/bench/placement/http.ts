/**
 * A minimal keep-alive HTTP client for Placement-compatible APIs (both targets get the
 * same client, so client overhead cancels out), with per-request timing.
 */
import { Agent, request } from 'node:http';

/** Headers of every request, as the perfload job sends them. */
const HEADERS = {
  'x-auth-token': 'admin',
  'openstack-api-version': 'placement latest',
  accept: 'application/json',
  'content-type': 'application/json',
};

export interface HttpResult {
  readonly status: number;
  readonly body: string;
  /** Seconds from sending to the last byte of the body. */
  readonly seconds: number;
}

/** One target: a base URL and a connection pool. */
export class PlacementHttp {
  private readonly agent: Agent;
  private readonly url: URL;

  constructor(base: string, maxSockets = 32) {
    this.url = new URL(base);
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  /** Sends one request; resolves with status, body text and wall time. */
  req(method: string, path: string, body?: unknown): Promise<HttpResult> {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const started = process.hrtime.bigint();
    return new Promise((resolve, reject) => {
      const r = request(
        {
          host: this.url.hostname,
          port: this.url.port,
          method,
          path,
          agent: this.agent,
          headers: { ...HEADERS, ...(data ? { 'content-length': Buffer.byteLength(data) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              seconds: Number(process.hrtime.bigint() - started) / 1e9,
            }),
          );
          res.on('error', reject);
        },
      );
      r.setTimeout(900_000, () => r.destroy(new Error(`${method} ${path}: timeout`)));
      r.on('error', reject);
      if (data) r.write(data);
      r.end();
    });
  }

  /** Like `req` but throws unless the status is one of `ok`. */
  async must(method: string, path: string, body?: unknown, ok: readonly number[] = [200, 201, 204]): Promise<HttpResult> {
    const res = await this.req(method, path, body);
    if (!ok.includes(res.status)) throw new Error(`${method} ${path} -> ${res.status} ${res.body.slice(0, 300)}`);
    return res;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs `fn` over `items` with at most `concurrency` in flight. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
