import type { Channel } from 'amqplib';

/**
 * The broker objects one served queue needs. Everything is durable; queues are quorum
 * queues (replicated, fsync'd before the publisher confirm, with a delivery counter).
 */
export interface QueueTopology {
  /** The bus's topic exchange (`cellsched`). */
  readonly exchange: string;
  /**
   * Binding keys = routing keys: `[conductor]`, `[compute.host-12]`, or for a server pool
   * every `compute.<host>` one process serves.
   */
  readonly bindingKeys: readonly string[];
  /** Queue name: the binding key as in Nova (`compute.host-12`), or the pool's own name. */
  readonly queue: string;
  /**
   * Set for a server pool: one queue bound to many `<topic>.<server>` keys, owned by one
   * process at a time through the exclusive (connection-scoped) classic queue of this name.
   */
  readonly ownerLock?: string;
  /** Direct exchange for dead letters: `<exchange>.dlx`. */
  readonly deadLetterExchange: string;
  /** `<queue>.dlq`, bound to the DLX with the queue's name. */
  readonly deadLetterQueue: string;
  /** Consumer-side limit: after this many deliveries a failing cast is dead-lettered. */
  readonly maxDeliveries: number;
}

/** Extra deliveries the broker allows before it dead-letters by itself (a consumer that keeps crashing). */
export const BROKER_DELIVERY_LIMIT_MARGIN = 5;

/** Topology for a queue on `exchange` bound with `bindingKey`. */
export function queueTopology(exchange: string, bindingKey: string, maxDeliveries: number): QueueTopology {
  return {
    exchange,
    bindingKeys: [bindingKey],
    queue: bindingKey,
    maxDeliveries,
    deadLetterExchange: `${exchange}.dlx`,
    deadLetterQueue: `${bindingKey}.dlq`,
  };
}

/** Topology of a server pool: queue `queue` bound to every key of `bindingKeys`, its DLQ, its owner lock. */
export function poolTopology(exchange: string, queue: string, bindingKeys: readonly string[], maxDeliveries: number): QueueTopology {
  return {
    exchange,
    bindingKeys,
    queue,
    maxDeliveries,
    ownerLock: `${queue}.owner`,
    deadLetterExchange: `${exchange}.dlx`,
    deadLetterQueue: `${queue}.dlq`,
  };
}

/** The AMQP reply code RabbitMQ closes a channel with when an exclusive queue belongs to another connection. */
export const RESOURCE_LOCKED = 405;

/** Quorum queue arguments of a served queue. Arguments are fixed once a queue exists. */
export function queueArguments(t: QueueTopology): Record<string, unknown> {
  return {
    'x-queue-type': 'quorum',
    // NOTE: the consumer dead-letters with a reason long before this; the broker limit
    // is the backstop for a consumer that crashes on every delivery of a poison message.
    'x-delivery-limit': t.maxDeliveries + BROKER_DELIVERY_LIMIT_MARGIN,
    'x-dead-letter-exchange': t.deadLetterExchange,
    'x-dead-letter-routing-key': t.queue,
    // At-least-once dead-lettering (RabbitMQ >= 3.10) requires reject-publish overflow.
    'x-dead-letter-strategy': 'at-least-once',
    'x-overflow': 'reject-publish',
  };
}

/**
 * Declares (idempotently) the exchanges, the queue, its DLQ and their bindings. For a pool,
 * first takes the owner lock (an exclusive, non-durable classic queue: the broker refuses it
 * to a second connection with 405 RESOURCE_LOCKED, and drops it when the owner's
 * connection closes, a crash included).
 */
export async function declareQueueTopology(channel: Channel, t: QueueTopology): Promise<void> {
  if (t.ownerLock !== undefined) await channel.assertQueue(t.ownerLock, { exclusive: true, durable: false, autoDelete: false });
  await channel.assertExchange(t.exchange, 'topic', { durable: true });
  await channel.assertExchange(t.deadLetterExchange, 'direct', { durable: true });
  await channel.assertQueue(t.deadLetterQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await channel.bindQueue(t.deadLetterQueue, t.deadLetterExchange, t.queue);
  await channel.assertQueue(t.queue, { durable: true, arguments: queueArguments(t) });
  // NOTE: one round trip per binding (about 1 ms each): 1,000 hosts bind in about a second.
  for (const key of t.bindingKeys) await channel.bindQueue(t.queue, t.exchange, key);
}
