import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Logger } from 'pino';
import { backoffDelay, type BackoffPolicy } from './backoff';
import type { BusConnection } from './connection';
import { handleDelivery, type DeliveryDeps, type Route } from './delivery';
import type { ServiceEntry } from './definitions';
import type { Publisher } from './publisher';
import { BUS_ERROR, BusError } from './errors';
import { declareQueueTopology, RESOURCE_LOCKED, type QueueTopology } from './topology';

/** Settings of one served queue, resolved. */
export interface SubscriptionSettings {
  readonly service: ServiceEntry;
  readonly routes: ReadonlyMap<string, Route>;
  /** A server pool's handlers for casts to servers nobody serves any more. */
  readonly notServedRoutes?: ReadonlyMap<string, Route>;
  readonly topology: QueueTopology;
  readonly prefetch: number;
  readonly retryBackoff: BackoffPolicy;
  readonly reattachBackoff: BackoffPolicy;
  readonly deadLetterTimeoutMs: number;
}

/** A running consumer of one queue. `close` stops it gracefully. */
export interface CastSubscription {
  /** The queue consumed (`compute.host-12`); its dead letters go to `<queue>.dlq`. */
  readonly queue: string;
  /** Deliveries being handled right now. */
  readonly inFlight: number;
  /** Stops consuming, waits up to `timeoutMs` for in-flight handlers, closes the channel. Idempotent. */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * One consumer channel per served queue: prefetch, topology declared on every attach,
 * re-attached by itself after a reconnection (open hook) or a channel-only failure.
 */
export class Subscription implements CastSubscription {
  private channel: Channel | undefined;
  private attachedTo: ChannelModel | undefined;
  private consumerTag: string | undefined;
  private readonly handling = new Set<Promise<void>>();
  private readonly wakers = new Set<() => void>();
  private stopping = false;
  private readonly deps: DeliveryDeps;

  constructor(
    private readonly connection: BusConnection,
    publisher: Publisher,
    private readonly settings: SubscriptionSettings,
    private readonly logger: Logger,
  ) {
    const poolKeys = settings.topology.ownerLock === undefined ? undefined : new Set(settings.topology.bindingKeys);
    this.deps = { ...settings, poolKeys, publisher, logger, pause: (ms) => this.pause(ms) };
  }

  get queue(): string {
    return this.settings.topology.queue;
  }

  get inFlight(): number {
    return this.handling.size;
  }

  /** Open hook: (re)subscribe on a new connection. */
  readonly onOpen = async (model: ChannelModel): Promise<void> => {
    await this.attach(model);
  };

  /** Declares the topology and starts consuming on `model`. */
  async attach(model: ChannelModel): Promise<void> {
    if (this.stopping || (this.channel && this.attachedTo === model)) return;
    const channel = await model.createChannel();
    channel.on('error', (err: Error) => this.logger.warn({ err: err.message, queue: this.queue }, 'bus consumer channel error'));
    channel.on('close', () => this.onChannelClosed(channel, model));
    try {
      await channel.prefetch(this.settings.prefetch);
      await declareQueueTopology(channel, this.settings.topology);
      const reply = await channel.consume(this.queue, (msg) => this.onMessage(channel, msg), { noAck: false });
      this.channel = channel;
      this.attachedTo = model;
      this.consumerTag = reply.consumerTag;
    } catch (err) {
      await channel.close().catch(() => undefined);
      if ((err as { code?: unknown }).code === RESOURCE_LOCKED && this.settings.topology.ownerLock !== undefined) {
        throw new BusError(
          BUS_ERROR.queueLocked,
          `queue ${this.queue} is served by another connection (it holds ${this.settings.topology.ownerLock}): is another process using the same pool name?`,
          true,
          { cause: err },
        );
      }
      throw err;
    }
    this.logger.info(
      { queue: this.queue, prefetch: this.settings.prefetch, bindings: this.settings.topology.bindingKeys.length },
      'bus consumer attached',
    );
  }

  async close(timeoutMs = 30_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.connection.removeOpenHook(this.onOpen);
    const channel = this.channel;
    if (channel && this.consumerTag) await channel.cancel(this.consumerTag).catch(() => undefined);
    for (const wake of [...this.wakers]) wake();
    await this.drain(timeoutMs);
    this.channel = undefined;
    // A pool's owner lock goes with its owner: another process may take the queue over now.
    const lock = this.settings.topology.ownerLock;
    if (channel && lock !== undefined) await channel.deleteQueue(lock).catch(() => undefined);
    if (channel) await channel.close().catch(() => undefined);
  }

  private async drain(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.allSettled([...this.handling]), timeout]);
    clearTimeout(timer);
    if (this.handling.size > 0)
      this.logger.warn(
        { queue: this.queue, in_flight: this.handling.size },
        'closing with handlers still running; they will be redelivered',
      );
  }

  private onMessage(channel: Channel, msg: ConsumeMessage | null): void {
    if (msg === null) {
      // NOTE: the broker cancelled the consumer (queue deleted); re-attach re-declares it.
      this.logger.warn({ queue: this.queue }, 'bus consumer cancelled by broker');
      channel.close().catch(() => undefined);
      return;
    }
    const job: Promise<void> = handleDelivery(this.deps, channel, msg)
      .catch((err: unknown) => this.logger.error({ err, queue: this.queue }, 'delivery handling failed'))
      .finally(() => this.handling.delete(job));
    this.handling.add(job);
  }

  private onChannelClosed(channel: Channel, model: ChannelModel): void {
    if (this.channel !== channel) return;
    this.channel = undefined;
    this.consumerTag = undefined;
    // The connection's open hook re-attaches after a reconnect; a channel-only failure is ours.
    if (!this.stopping && this.connection.current() === model) void this.reattach(model);
  }

  private async reattach(model: ChannelModel): Promise<void> {
    for (let attempt = 1; !this.stopping && this.connection.current() === model; attempt++) {
      await this.pause(backoffDelay(this.settings.reattachBackoff, attempt));
      if (this.stopping || this.connection.current() !== model || this.channel) return;
      try {
        await this.attach(model);
        return;
      } catch (err) {
        this.logger.warn({ err: String(err), queue: this.queue, attempt }, 'bus consumer re-attach failed');
      }
    }
  }

  private pause(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }
}
