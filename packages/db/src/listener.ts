import { Client } from 'pg';

/** Whether a {@link ChangeListener} is listening now (notifications arrive) or not (they may be missed). */
export type ListenerState = 'listening' | 'down';

/** Options of {@link ChangeListener}. */
export interface ChangeListenerOptions {
  /** `postgres://user:password@host:port/database` */
  readonly url: string;
  /** The channel to LISTEN on: a plain lower-case identifier. */
  readonly channel: string;
  /** Shown in `pg_stat_activity.application_name`. */
  readonly applicationName?: string;
  /** Each notification on the channel, with its payload. */
  readonly onNotify: (payload: string) => void;
  /**
   * Every change of state: 'listening' once LISTEN is in effect (notifications of commits after
   * this point arrive), 'down' when the session is lost (commits meanwhile are not notified).
   */
  readonly onState?: (state: ListenerState, err?: unknown) => void;
  /** First wait before reconnecting after a loss (default 100 ms); doubled per failure up to `maxBackoffMs` (default 5 s). */
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A PostgreSQL session that LISTENs on one channel and comes back by itself: when the session is
 * lost (server restart, terminated backend, network cut) it reports 'down' and reconnects with
 * a growing backoff, reporting 'listening' again once LISTEN is in effect. Callers that cache
 * what the notifications announce must treat 'down' as "anything may have changed" (a commit
 * while down is never notified). Throws `TypeError` on bad options; `start` never throws.
 */
export class ChangeListener {
  private client: Client | undefined;
  private state: ListenerState = 'down';
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private backoffMs: number;

  constructor(private readonly opts: ChangeListenerOptions) {
    if (typeof opts.url !== 'string' || !URL.canParse(opts.url)) throw new TypeError('ChangeListener: url must be a postgres URL');
    if (!CHANNEL.test(opts.channel))
      throw new TypeError(`ChangeListener: channel ${JSON.stringify(opts.channel)} is not a plain identifier`);
    this.backoffMs = opts.minBackoffMs ?? 100;
  }

  /** Whether LISTEN is in effect now. */
  get listening(): boolean {
    return this.state === 'listening';
  }

  /** Connects and listens (in the background: failures are retried, told through `onState`). */
  start(): void {
    if (this.closed || this.client !== undefined || this.timer !== undefined) return;
    void this.connect();
  }

  /** Stops listening and ends the session; no callback is called after it resolves. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const client = this.client;
    this.client = undefined;
    this.state = 'down';
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.opts.url, application_name: this.opts.applicationName, keepAlive: true });
    this.client = client;
    // NOTE: one handler for every way a session ends (error, then end; or end alone)
    let lost = false;
    const onLost = (err?: unknown): void => {
      if (lost) return;
      lost = true;
      client.end().catch(() => undefined);
      if (this.client !== client) return;
      this.client = undefined;
      this.setState('down', err);
      this.schedule();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (n) => {
      if (this.client === client && n.channel === this.opts.channel) this.opts.onNotify(n.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.opts.channel}`);
    } catch (err) {
      onLost(err);
      return;
    }
    if (this.client !== client) {
      // closed meanwhile
      await client.end().catch(() => undefined);
      return;
    }
    this.backoffMs = this.opts.minBackoffMs ?? 100;
    this.setState('listening');
  }

  private schedule(): void {
    if (this.closed) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.opts.maxBackoffMs ?? 5000);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.closed) void this.connect();
    }, wait);
    this.timer.unref();
  }

  private setState(state: ListenerState, err?: unknown): void {
    if (this.closed) return;
    // NOTE: 'down' is told even when the session never listened: a caller waiting for the first 'listening' learns why not
    if (state === this.state && state === 'listening') return;
    this.state = state;
    this.opts.onState?.(state, err);
  }
}
