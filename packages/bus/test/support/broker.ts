// Helpers for bus integration tests against the real RabbitMQ: per-test vhosts, polling.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import * as amqp from 'amqplib';
import pino from 'pino';

const run = promisify(execFile);

/** Base URL of the test broker (vhost `/`). */
export const AMQP_URL = process.env.CELLSCHED_TEST_AMQP_URL ?? 'amqp://cellsched:cellsched@127.0.0.1:5672/';

/** Silent unless BUS_TEST_LOG=debug|info|warn. */
export const testLogger = pino({ level: process.env.BUS_TEST_LOG ?? 'silent' });

export async function rabbitmqctl(...args: string[]): Promise<string> {
  const { stdout } = await run('rabbitmqctl', args, { timeout: 120_000 });
  return stdout;
}

function userOf(url: string): string {
  return decodeURIComponent(new URL(url).username);
}

/** A URL for `vhost` with the base URL's credentials. */
export function vhostUrl(vhost: string): string {
  const url = new URL(AMQP_URL);
  url.pathname = `/${encodeURIComponent(vhost)}`;
  return url.toString();
}

export interface TestVhost {
  readonly name: string;
  readonly url: string;
  dispose(): Promise<void>;
}

/**
 * Creates a fresh vhost. `permissions` are configure/write/read regexes for the test user
 * (`null`: no permissions at all, so the user cannot open it).
 */
export async function createVhost(prefix: string, permissions: [string, string, string] | null = ['.*', '.*', '.*']): Promise<TestVhost> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await rabbitmqctl('add_vhost', name);
  if (permissions) await rabbitmqctl('set_permissions', '-p', name, userOf(AMQP_URL), ...permissions);
  return {
    name,
    url: vhostUrl(name),
    dispose: async () => {
      await rabbitmqctl('delete_vhost', name);
    },
  };
}

/** Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Raw AMQP access to a vhost, to look into queues the way an operator would. */
export class Inspector {
  private constructor(
    private readonly model: amqp.ChannelModel,
    private readonly channel: amqp.Channel,
  ) {}

  static async open(url: string): Promise<Inspector> {
    const model = await amqp.connect(url, { noDelay: true });
    return new Inspector(model, await model.createChannel());
  }

  /** Waits for the next message on `queue` and acks it. */
  async take(queue: string, timeoutMs = 20_000): Promise<amqp.GetMessage> {
    return waitFor(
      `a message on ${queue}`,
      async () => {
        const msg = await this.channel.get(queue, { noAck: true });
        return msg === false ? undefined : msg;
      },
      timeoutMs,
    );
  }

  async count(queue: string): Promise<number> {
    return (await this.channel.checkQueue(queue)).messageCount;
  }

  async consumers(queue: string): Promise<number> {
    return (await this.channel.checkQueue(queue)).consumerCount;
  }

  /** Publishes a raw message (for malformed-message tests). */
  async publish(exchange: string, routingKey: string, content: Buffer, headers: Record<string, unknown>): Promise<void> {
    const confirm = await this.model.createConfirmChannel();
    confirm.publish(exchange, routingKey, content, { persistent: true, headers, messageId: randomBytes(8).toString('hex') });
    await confirm.waitForConfirms();
    await confirm.close();
  }

  async close(): Promise<void> {
    await this.model.close();
  }
}
