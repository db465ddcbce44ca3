import { EventEmitter } from 'node:events';
import * as amqp from 'amqplib';
import type { ChannelModel } from 'amqplib';
import type { Logger } from 'pino';
import { backoffDelay, type BackoffPolicy } from './backoff';
import { BUS_ERROR, BusError, redactUrl } from './errors';

/** Options of one broker connection (one vhost). */
export interface ConnectionOptions {
  readonly url: string;
  /** Shown as the connection name in `rabbitmqctl list_connections client_properties`. */
  readonly name: string;
  readonly heartbeatSeconds: number;
  readonly backoff: BackoffPolicy;
  /** How long the first connect may retry transient failures before failing. */
  readonly connectTimeoutMs: number;
  readonly logger: Logger;
}

/** Run on every (re)connection before the connection counts as open: declare, subscribe. */
export type OpenHook = (model: ChannelModel) => Promise<void>;

function withHeartbeat(url: string, seconds: number): string {
  const parsed = new URL(url);
  if (!parsed.searchParams.has('heartbeat')) parsed.searchParams.set('heartbeat', String(seconds));
  return parsed.toString();
}

type State = 'connecting' | 'open' | 'closing' | 'closed';

/** True for the broker refusing credentials or the vhost (a config error, not an outage). */
export function isAccessRefused(err: unknown): boolean {
  const text = err instanceof Error ? err.message : String(err);
  return /ACCESS.REFUSED|NOT_ALLOWED|Expected ConnectionOpenOk/.test(text);
}

/**
 * One AMQP connection that reconnects by itself with jittered, capped backoff after a
 * broker restart or network loss, and re-runs every open hook (topology, consumers) on
 * each new connection. Emits `open` (model) and `lost` (error).
 */
export class BusConnection extends EventEmitter {
  private state: State = 'connecting';
  private model: ChannelModel | undefined;
  private readonly hooks = new Set<OpenHook>();
  private wakeSleeper: (() => void) | undefined;
  /** Number of times an open connection was lost (each is followed by reconnection attempts). */
  reconnects = 0;

  constructor(private readonly options: ConnectionOptions) {
    super();
    this.setMaxListeners(0);
  }

  /** Connects for the first time. Rejects `bus.connection.access_refused` or `bus.connection.unavailable`. */
  async start(): Promise<void> {
    await this.connectLoop(true);
  }

  /** Adds a hook run on every future connection (not on the current one). */
  addOpenHook(hook: OpenHook): void {
    this.hooks.add(hook);
  }

  removeOpenHook(hook: OpenHook): void {
    this.hooks.delete(hook);
  }

  /** The open connection, or undefined while reconnecting. */
  current(): ChannelModel | undefined {
    return this.state === 'open' ? this.model : undefined;
  }

  get isClosed(): boolean {
    return this.state === 'closing' || this.state === 'closed';
  }

  /** Resolves with the open connection; waits for a reconnection up to `timeoutMs`. */
  async whenOpen(timeoutMs: number): Promise<ChannelModel> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.isClosed) throw new BusError(BUS_ERROR.closed, 'the bus is closed', false);
      const model = this.current();
      if (model) return model;
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new BusError(BUS_ERROR.unavailable, `not connected to ${redactUrl(this.options.url)} within ${timeoutMs} ms`, true);
      }
      await this.nextStateChange(remaining);
    }
  }

  /** Closes the connection; no reconnection afterwards. Idempotent. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closing';
    this.wakeSleeper?.();
    this.emit('state');
    const model = this.model;
    this.model = undefined;
    if (model) await model.close().catch((err: unknown) => this.options.logger.debug({ err }, 'bus connection close failed'));
    this.state = 'closed';
  }

  private nextStateChange(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.off('state', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.on('state', done);
    });
  }

  private async connectLoop(initial: boolean): Promise<void> {
    const deadline = initial ? Date.now() + this.options.connectTimeoutMs : Number.POSITIVE_INFINITY;
    const where = redactUrl(this.options.url);
    for (let attempt = 1; this.state === 'connecting'; attempt++) {
      try {
        await this.openOnce();
        return;
      } catch (err) {
        if (initial && isAccessRefused(err)) {
          throw new BusError(
            BUS_ERROR.accessRefused,
            `broker refused access to ${where}: check the user and its vhost permissions (${String(err)})`,
            false,
            { cause: err },
          );
        }
        const delay = backoffDelay(this.options.backoff, attempt);
        if (Date.now() + delay > deadline) {
          throw new BusError(
            BUS_ERROR.unavailable,
            `cannot connect to ${where} within ${this.options.connectTimeoutMs} ms: ${String(err)}`,
            true,
            { cause: err },
          );
        }
        this.options.logger.warn({ err: String(err), attempt, delay_ms: delay, url: where }, 'bus connect failed, retrying');
        await this.sleep(delay);
      }
    }
  }

  private async openOnce(): Promise<void> {
    const { url, name, heartbeatSeconds, logger } = this.options;
    // NOTE: noDelay always: with Nagle on, every small publish waits ~40 ms (TOOLCHAIN.md).
    const model = await amqp.connect(withHeartbeat(url, heartbeatSeconds), { noDelay: true, clientProperties: { connection_name: name } });
    let lost = false;
    model.on('error', (err: Error) => logger.warn({ err: err.message }, 'bus connection error'));
    // NOTE: a blocked connection (broker memory/disk alarm) delays confirms; casts then hit their deadline.
    model.on('blocked', (reason: string) => logger.warn({ reason }, 'bus connection blocked by broker'));
    model.on('unblocked', () => logger.info('bus connection unblocked'));
    model.once('close', (err?: Error) => {
      lost = true;
      this.onClosed(model, err);
    });
    try {
      for (const hook of [...this.hooks]) await hook(model);
      if (lost) throw new Error('connection lost while declaring topology');
    } catch (err) {
      await model.close().catch(() => undefined);
      throw err;
    }
    if (this.state !== 'connecting') {
      await model.close().catch(() => undefined);
      return;
    }
    this.model = model;
    this.state = 'open';
    this.emit('state');
    this.emit('open', model);
    logger.info({ url: redactUrl(url), reconnects: this.reconnects }, 'bus connected');
  }

  private onClosed(model: ChannelModel, err: Error | undefined): void {
    if (this.model !== model || this.state !== 'open') return;
    this.model = undefined;
    this.state = 'connecting';
    this.reconnects += 1;
    this.emit('state');
    this.emit('lost', err);
    this.options.logger.warn({ err: err?.message, url: redactUrl(this.options.url) }, 'bus connection lost, reconnecting');
    this.connectLoop(false).catch((loopErr: unknown) => this.options.logger.error({ err: loopErr }, 'bus reconnect loop failed'));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeSleeper = undefined;
        resolve();
      }, ms);
      this.wakeSleeper = () => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
    });
  }
}
