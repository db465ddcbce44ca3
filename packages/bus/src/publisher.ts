import type { ChannelModel, ConfirmChannel, Options } from 'amqplib';
import type { Logger } from 'pino';
import type { BusConnection } from './connection';
import { BUS_ERROR, BusError } from './errors';

/** One message to publish with a publisher confirm. */
export interface OutgoingMessage {
  readonly exchange: string;
  readonly routingKey: string;
  readonly content: Buffer;
  /** `messageId` is required: it matches a broker `basic.return` to its publish. */
  readonly properties: Options.Publish & { messageId: string };
}

interface ChannelState {
  readonly channel: ConfirmChannel;
  readonly model: ChannelModel;
  error?: Error & { code?: number };
}

/** Thrown inside the publisher when the channel went away before the confirm. */
class ChannelLost extends Error {}

/**
 * Publishes over one ConfirmChannel per connection. `publish` resolves only after the
 * broker confirmed the message (it is then stored in every queue it was routed to), and
 * re-publishes after a reconnection when the channel dropped before the confirm, so a
 * message may reach the queue twice (at-least-once) but never silently not at all.
 */
export class Publisher {
  private state: ChannelState | undefined;
  private creating: Promise<ChannelState> | undefined;
  private readonly returned = new Set<string>();

  constructor(
    private readonly connection: BusConnection,
    private readonly exchange: string,
    private readonly logger: Logger,
  ) {}

  /** Open hook: a fresh confirm channel and the bus's topic exchange on each connection. */
  readonly onOpen = async (model: ChannelModel): Promise<void> => {
    await this.channelFor(model);
  };

  /**
   * Publishes and waits for the broker's confirm, until `deadline` (epoch ms).
   * Rejects with `bus.publish.unroutable` (no queue bound), `bus.publish.nacked`,
   * `bus.publish.access_refused`, `bus.publish.timeout` or `bus.connection.unavailable`.
   */
  async publish(message: OutgoingMessage, deadline: number): Promise<void> {
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new BusError(BUS_ERROR.publishTimeout, `no confirm for ${message.routingKey} before the deadline`, true);
      const model = await this.connection.whenOpen(remaining);
      let state: ChannelState;
      try {
        state = await this.channelFor(model);
      } catch (err) {
        if (this.connection.current() === model) throw this.setupError(message, err);
        continue;
      }
      try {
        await this.publishOnce(state, message, deadline);
        return;
      } catch (err) {
        if (!(err instanceof ChannelLost)) throw err;
        this.logger.debug(
          { routing_key: message.routingKey, message_id: message.properties.messageId },
          'channel lost before confirm, republishing',
        );
        // NOTE: a channel-only failure on a live connection must not become a hot loop.
        if (this.connection.current() === model) await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  private publishOnce(state: ChannelState, message: OutgoingMessage, deadline: number): Promise<void> {
    const id = message.properties.messageId;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          reject(
            new BusError(
              BUS_ERROR.publishTimeout,
              `broker did not confirm ${message.routingKey} in time; it may or may not be queued`,
              true,
            ),
          );
        },
        Math.max(1, deadline - Date.now()),
      );
      const settle = (err: unknown): void => {
        clearTimeout(timer);
        const wasReturned = this.returned.delete(id);
        if (err) reject(this.classify(state, message, err));
        else if (wasReturned)
          reject(
            new BusError(
              BUS_ERROR.publishUnroutable,
              `no queue is bound to ${message.exchange}/${message.routingKey}; nothing was queued`,
              false,
            ),
          );
        else resolve();
      };
      try {
        state.channel.publish(message.exchange, message.routingKey, message.content, { ...message.properties, mandatory: true }, settle);
      } catch (err) {
        settle(err);
      }
    });
  }

  private setupError(message: OutgoingMessage, err: unknown): Error {
    const code = (err as { code?: unknown }).code;
    if (code === 403) {
      return new BusError(BUS_ERROR.publishRefused, `broker refused access to exchange ${message.exchange}: ${String(err)}`, false, {
        cause: err,
      });
    }
    return err instanceof Error ? err : new Error(String(err));
  }

  private classify(state: ChannelState, message: OutgoingMessage, err: unknown): Error {
    if (state.error?.code === 403) {
      return new BusError(
        BUS_ERROR.publishRefused,
        `broker refused the publish to ${message.exchange}/${message.routingKey}: ${state.error.message}`,
        false,
        { cause: err },
      );
    }
    if (err instanceof Error && err.message === 'message nacked') {
      return new BusError(BUS_ERROR.publishNacked, `broker nacked ${message.routingKey}; it was not queued`, true);
    }
    return new ChannelLost(String(err));
  }

  private async channelFor(model: ChannelModel): Promise<ChannelState> {
    if (this.state?.model === model) return this.state;
    if (!this.creating) {
      this.creating = this.createChannel(model).finally(() => {
        this.creating = undefined;
      });
    }
    const state = await this.creating;
    if (state.model !== model) return this.channelFor(model);
    return state;
  }

  private async createChannel(model: ChannelModel): Promise<ChannelState> {
    const channel = await model.createConfirmChannel();
    const state: ChannelState = { channel, model };
    channel.on('error', (err: Error & { code?: number }) => {
      state.error = err;
      this.logger.warn({ err: err.message }, 'bus publish channel closed by broker');
    });
    channel.on('close', () => {
      if (this.state === state) this.state = undefined;
    });
    channel.on('return', (msg: { properties: { messageId?: unknown } }) => {
      if (typeof msg.properties.messageId === 'string') this.returned.add(msg.properties.messageId);
    });
    await channel.assertExchange(this.exchange, 'topic', { durable: true });
    this.state = state;
    return state;
  }
}
