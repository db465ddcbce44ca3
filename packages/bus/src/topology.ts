import type { Channel } from 'amqplib';

/**
 * The broker objects one served queue needs. Everything is durable; queues are quorum
 * queues (replicated, fsync'd before the publisher confirm, with a delivery counter).
 */
export interface QueueTopology {
  /** The bus's topic exchange (`cellsched`). */
  readonly exchange: string;
  /** Binding key = routing key: `conductor`, `compute.host-12`. */
  readonly bindingKey: string;
  /** Queue name, equal to the binding key as in Nova (`compute.host-12`). */
  readonly queue: string;
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
    exchange, bindingKey, queue: bindingKey, maxDeliveries,
    deadLetterExchange: `${exchange}.dlx`, deadLetterQueue: `${bindingKey}.dlq`,
  };
}

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

/** Declares (idempotently) the exchanges, the queue, its DLQ and their bindings. */
export async function declareQueueTopology(channel: Channel, t: QueueTopology): Promise<void> {
  await channel.assertExchange(t.exchange, 'topic', { durable: true });
  await channel.assertExchange(t.deadLetterExchange, 'direct', { durable: true });
  await channel.assertQueue(t.deadLetterQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await channel.bindQueue(t.deadLetterQueue, t.deadLetterExchange, t.queue);
  await channel.assertQueue(t.queue, { durable: true, arguments: queueArguments(t) });
  await channel.bindQueue(t.queue, t.exchange, t.bindingKey);
}
