import type { CastServiceInfo } from '@cellsched/wire';
import type { Logger } from 'pino';
import { backoffProblems, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff';
import { CastClient } from './cast-client';
import { BusConnection } from './connection';
import { describeService, routingKey, type CastServiceDefinition, type RequestOf, type ServiceEntry } from './definitions';
import type { CastHandler, Route } from './delivery';
import { BUS_ERROR, BusError, redactUrl } from './errors';
import { Publisher } from './publisher';
import { Subscription, type CastSubscription } from './subscription';
import { poolTopology, queueTopology, type QueueTopology } from './topology';

/** Options of one bus (one broker vhost). */
export interface BusOptions {
  /** `amqp://user:pass@host:5672/vhost`: one connection per bus. */
  readonly url: string;
  readonly logger: Logger;
  /** Topic exchange of the bus (Nova's control_exchange). Default `cellsched`. */
  readonly exchange?: string;
  /** Connection name shown by the broker. Default `cellsched`. */
  readonly name?: string;
  /** AMQP heartbeat; a dead peer is noticed within about twice this. Default 10. */
  readonly heartbeatSeconds?: number;
  /** Reconnect backoff. Default 100 ms doubling to 5 s, 50 % jitter. */
  readonly reconnectBackoff?: BackoffPolicy;
  /** How long the first connect retries before failing. Default 30 s. */
  readonly connectTimeoutMs?: number;
  /** Default cast deadline, reconnection wait included. Default 30 s. */
  readonly castTimeoutMs?: number;
}

/** Options of one served queue. */
export interface ServeOptions<S extends CastServiceDefinition = CastServiceDefinition> {
  /** Consume `<topic>.<server>` (`compute.host-12`) instead of the shared `<topic>` queue. */
  readonly server?: string;
  /**
   * Server pool: consume ONE queue, named `queue`, bound to `<topic>.<server>` for every
   * server listed (one process simulating many hosts). Casts keep their per-server routing
   * keys; `ctx.server` says which server a cast is for. Needs `queue`; excludes `server`.
   * The queue has one owner: a second connection serving the same `queue` is refused
   * `bus.queue.locked`. A cast that arrives under a key not listed (the queue was bound to
   * it by an earlier run with other servers) makes the pool unbind that key and forward
   * the cast to whichever queue is bound to it now; if none is, the cast goes to the
   * `notServed` handler of its method, or to the pool's DLQ (`bus.server.not_served`).
   */
  readonly servers?: readonly string[];
  /**
   * Only with `servers`: handlers for casts addressed to a server that no queue serves any
   * more (a host this process stopped simulating). Each should report the server's failure
   * for that request, so that it moves on instead of waiting in a DLQ. Same contract as the
   * handlers (idempotent; acked once resolved).
   */
  readonly notServed?: CastHandlers<S>;
  /** Name of the pool's durable queue (letters, digits, `.`, `_`, `:`, `-`); its DLQ is `<queue>.dlq`. Only with `servers`. */
  readonly queue?: string;
  /** Unacked deliveries handled at once. Default 16. */
  readonly prefetch?: number;
  /** Deliveries before a failing cast is dead-lettered. A property of the queue: keep it equal for all its consumers. Default 5. */
  readonly maxDeliveries?: number;
  /** Delay before a failed cast is requeued, by attempt. Default 200 ms doubling to 5 s. */
  readonly retryBackoff?: BackoffPolicy;
  /** Override of the service's `CAST_SERVICES` entry. */
  readonly info?: CastServiceInfo;
}

/** Handlers for some or all methods of a generated service, typed by its request messages. */
export type CastHandlers<S extends CastServiceDefinition> = { readonly [K in keyof S]?: CastHandler<RequestOf<S[K]>> };

/** The routes (wire name → codec and handler) of the handlers given; throws `bus.invalid_argument` for a method the service lacks. */
function routesOf<S extends CastServiceDefinition>(service: ServiceEntry, handlers: CastHandlers<S>): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const [key, handler] of Object.entries(handlers) as [string, CastHandler<unknown> | undefined][]) {
    const entry = [...service.methods.values()].find((m) => m.key === key);
    if (!entry) throw new BusError(BUS_ERROR.invalidArgument, `${service.fullName} has no method ${key}`, false);
    if (handler) routes.set(entry.wireName, { entry, handler });
  }
  return routes;
}

const RETRY_BACKOFF: BackoffPolicy = Object.freeze({ initialDelayMs: 200, maxDelayMs: 5000, factor: 2, jitter: 0.5 });

function intInRange(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new BusError(BUS_ERROR.invalidArgument, `${name} must be an integer in [${min}, ${max}] (got ${value})`, false);
  }
}

/**
 * A RabbitMQ cast bus: one connection to one vhost, a durable topic exchange, durable
 * quorum queues, persistent confirmed casts, manual acks after the handler resolved,
 * bounded redelivery into `<queue>.dlq`, reconnection by itself.
 * Delivery is at-least-once: every handler must be idempotent.
 */
export class Bus {
  private readonly publisher: Publisher;
  private readonly subscriptions = new Set<Subscription>();

  private constructor(
    private readonly connection: BusConnection,
    private readonly options: BusOptions & { readonly exchange: string; readonly castTimeoutMs: number },
  ) {
    this.publisher = new Publisher(connection, options.exchange, options.logger);
    connection.addOpenHook(this.publisher.onOpen);
  }

  /**
   * Connects (retrying a down broker up to `connectTimeoutMs`) and declares the exchange.
   * Rejects `bus.connection.access_refused` for bad credentials or a vhost the user may not
   * use, `bus.connection.unavailable` when the broker stays unreachable, `bus.invalid_argument`.
   */
  static async connect(options: BusOptions): Promise<Bus> {
    const backoff = options.reconnectBackoff ?? DEFAULT_BACKOFF;
    const problems = backoffProblems(backoff).map((p) => `reconnectBackoff: ${p}`);
    const exchange = options.exchange ?? 'cellsched';
    if (!/^[A-Za-z0-9._-]{1,200}$/.test(exchange)) problems.push(`exchange ${JSON.stringify(exchange)} is not a valid name`);
    if (!/^amqps?:\/\//.test(options.url)) problems.push(`url ${redactUrl(options.url)} is not amqp:// or amqps://`);
    for (const key of ['heartbeatSeconds', 'connectTimeoutMs', 'castTimeoutMs'] as const) {
      const value = options[key];
      if (value !== undefined && !(Number.isFinite(value) && value > 0)) problems.push(`${key} must be a positive number (got ${value})`);
    }
    if (problems.length > 0) throw new BusError(BUS_ERROR.invalidArgument, problems.join('; '), false);
    const logger = options.logger.child({ component: 'bus', exchange });
    const connection = new BusConnection({
      url: options.url,
      name: options.name ?? 'cellsched',
      heartbeatSeconds: options.heartbeatSeconds ?? 10,
      backoff,
      connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
      logger,
    });
    const bus = new Bus(connection, { ...options, logger, exchange, castTimeoutMs: options.castTimeoutMs ?? 30_000 });
    try {
      await connection.start();
    } catch (err) {
      await connection.close();
      throw err;
    }
    return bus;
  }

  /** How many times the open connection was lost (the bus reconnects by itself each time). */
  get reconnects(): number {
    return this.connection.reconnects;
  }

  /** True while connected (false while reconnecting or after close). */
  get connected(): boolean {
    return this.connection.current() !== undefined;
  }

  /** A typed sender for a generated cast service (`ComputeServiceService`). */
  castClient<S extends CastServiceDefinition>(definition: S, info?: CastServiceInfo): CastClient<S> {
    return new CastClient<S>(describeService(definition, info), this.publisher, this.options.exchange, this.options.castTimeoutMs);
  }

  /**
   * Consumes `<topic>` or `<topic>.<server>` (or a server pool's queue, see `servers`) and
   * dispatches each cast to its handler by the method header. Resolves once consuming;
   * re-subscribes by itself after reconnections.
   */
  async serve<S extends CastServiceDefinition>(
    definition: S,
    handlers: CastHandlers<S>,
    options: ServeOptions<S> = {},
  ): Promise<CastSubscription> {
    const service = describeService(definition, options.info);
    const routes = routesOf(service, handlers);
    if (routes.size === 0) throw new BusError(BUS_ERROR.invalidArgument, 'serve needs at least one handler', false);
    if (options.notServed !== undefined && options.servers === undefined)
      throw new BusError(BUS_ERROR.invalidArgument, 'notServed is only for a server pool (servers)', false);
    const notServedRoutes = options.notServed === undefined ? undefined : routesOf(service, options.notServed);
    const prefetch = options.prefetch ?? 16;
    const maxDeliveries = options.maxDeliveries ?? 5;
    intInRange('prefetch', prefetch, 1, 10_000);
    intInRange('maxDeliveries', maxDeliveries, 1, 1000);
    const retryBackoff = options.retryBackoff ?? RETRY_BACKOFF;
    if (backoffProblems(retryBackoff).length > 0)
      throw new BusError(BUS_ERROR.invalidArgument, `retryBackoff: ${backoffProblems(retryBackoff).join('; ')}`, false);
    const topology = this.topologyFor(service.topic, options, maxDeliveries);
    const subscription = new Subscription(
      this.connection,
      this.publisher,
      {
        service,
        routes,
        notServedRoutes,
        topology,
        prefetch,
        retryBackoff,
        reattachBackoff: DEFAULT_BACKOFF,
        deadLetterTimeoutMs: this.options.castTimeoutMs,
      },
      this.options.logger,
    );
    this.connection.addOpenHook(subscription.onOpen);
    this.subscriptions.add(subscription);
    try {
      await subscription.attach(await this.connection.whenOpen(this.options.castTimeoutMs));
    } catch (err) {
      // NOTE: a refused subscription (e.g. bus.queue.locked) must not come back on the next reconnection.
      this.subscriptions.delete(subscription);
      await subscription.close(0);
      throw err;
    }
    return subscription;
  }

  private topologyFor(topic: string, options: ServeOptions<CastServiceDefinition>, maxDeliveries: number): QueueTopology {
    if (options.servers === undefined) {
      if (options.queue !== undefined) throw new BusError(BUS_ERROR.invalidArgument, 'queue is only for a server pool (servers)', false);
      return queueTopology(this.options.exchange, routingKey(topic, options.server), maxDeliveries);
    }
    const problems: string[] = [];
    if (options.server !== undefined) problems.push('give server or servers, not both');
    if (options.servers.length === 0) problems.push('servers must not be empty');
    if (new Set(options.servers).size !== options.servers.length) problems.push('servers must be unique');
    if (options.queue === undefined || !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(options.queue)) {
      problems.push(`queue ${JSON.stringify(options.queue)} must be a name of letters, digits, '.', '_', ':', '-'`);
    }
    if (problems.length > 0) throw new BusError(BUS_ERROR.invalidArgument, problems.join('; '), false);
    const keys = options.servers.map((s) => routingKey(topic, s));
    return poolTopology(this.options.exchange, options.queue as string, keys, maxDeliveries);
  }

  /**
   * Graceful close: stops every consumer, waits up to `timeoutMs` for in-flight handlers
   * (their acks still go out), then closes the connection. Unfinished deliveries are
   * redelivered elsewhere. Casts after close reject `bus.closed`. Idempotent.
   */
  async close(timeoutMs = 30_000): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close(timeoutMs)));
    this.subscriptions.clear();
    await this.connection.close();
  }
}
