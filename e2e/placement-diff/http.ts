/**
 * Sends one operation to one target, with that target's own generations substituted for
 * the `$GEN:` / `$CGEN:` placeholders (read by uncompared helper GETs just before).
 */
import type { Operation } from './world';

/** What is compared of an answer. */
export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

/** The headers a client may rely on; others (dates, request ids, server) are not compared. */
const KEPT_HEADERS = ['content-type', 'location', 'allow', 'openstack-api-version', 'cache-control', 'last-modified', 'vary'];

export class Target {
  constructor(
    readonly name: string,
    readonly base: string,
  ) {}

  async send(op: Operation): Promise<Answer> {
    const headers: Record<string, string> = { 'x-auth-token': 'admin', accept: 'application/json' };
    if (op.version !== undefined) headers['openstack-api-version'] = `placement ${op.version}`;
    let body: string | undefined = op.raw;
    if (op.body !== undefined) body = JSON.stringify(await this.substitute(op.body));
    if (body !== undefined) headers['content-type'] = 'application/json';
    Object.assign(headers, op.headers ?? {});
    return this.request(op.method, op.path, headers, body);
  }

  private async request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    const res = await fetch(`${this.base}${path}`, { method, headers, body });
    const text = await res.text();
    const kept: Record<string, string> = {};
    for (const h of KEPT_HEADERS) {
      const v = res.headers.get(h);
      if (v !== null) kept[h] = v;
    }
    return { status: res.status, headers: kept, text };
  }

  private async getJson(path: string): Promise<Record<string, unknown> | undefined> {
    const r = await this.request('GET', path, { 'x-auth-token': 'admin', 'openstack-api-version': 'placement latest' });
    return r.status === 200 ? (JSON.parse(r.text) as Record<string, unknown>) : undefined;
  }

  /** Replaces every placeholder string of `value` by this target's current generation (± delta). */
  private async substitute(value: unknown): Promise<unknown> {
    if (typeof value === 'string') {
      const m = /^\$(C?GEN)([+-]\d+)?:(.+)$/.exec(value);
      if (!m) return value;
      const [, kind, delta, uuid] = m;
      const current =
        kind === 'GEN'
          ? (((await this.getJson(`/resource_providers/${uuid}`))?.generation as number | undefined) ?? 0)
          : (((await this.getJson(`/allocations/${uuid}`))?.consumer_generation as number | undefined) ?? null);
      return delta === undefined || current === null ? current : current + Number(delta);
    }
    if (Array.isArray(value)) return Promise.all(value.map((v) => this.substitute(v)));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = await this.substitute(v);
      return out;
    }
    return value;
  }
}
