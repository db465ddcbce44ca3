// The casts dead-lettered during a scenario, read from outside: every `<queue>.dlq` of the
// system's vhosts (rabbitmqctl lists them; a channel with each bus's own credentials reads them
// without acking, so they stay), decoded with the wire types to the instances they concern
// (builds, deletes, and the moves' server_action / instance_action / instance_step(_result)).
import { execFileSync } from 'node:child_process';
import {
  BuildAndRunInstanceRequest,
  BuildAbortedRequest,
  BuildInstancesRequest,
  BuildSucceededRequest,
  DeleteInstanceRequest,
  InstanceActionRequest,
  InstanceStepRequest,
  InstanceStepResultRequest,
  ScheduleAndBuildInstancesRequest,
  ServerActionRequest,
  TerminateInstanceRequest,
} from '@cellsched/wire';
import amqp from 'amqplib';
import type { ChaosStack } from './stack';

/** One dead-lettered cast: where, why, and the instances it was about. */
export interface DeadLetter {
  readonly vhost: string;
  readonly queue: string;
  readonly method: string;
  readonly code: string;
  readonly reason: string;
  readonly at: string;
  readonly instances: readonly string[];
}

/** The instances a cast of `method` concerns (empty for host-level casts such as heartbeats). */
function instancesOf(method: string, body: Buffer): string[] {
  switch (method) {
    case 'schedule_and_build_instances':
      return ScheduleAndBuildInstancesRequest.decode(body).buildRequests.map((b) => b.instanceUuid);
    case 'build_and_run_instance':
      return [BuildAndRunInstanceRequest.decode(body).instance?.uuid ?? ''];
    case 'build_instances':
      return [BuildInstancesRequest.decode(body).instance?.uuid ?? ''];
    case 'build_succeeded':
      return [BuildSucceededRequest.decode(body).instanceUuid];
    case 'build_aborted':
      return [BuildAbortedRequest.decode(body).instanceUuid];
    case 'delete_instance':
      return [DeleteInstanceRequest.decode(body).instanceUuid];
    case 'terminate_instance':
      return [TerminateInstanceRequest.decode(body).instanceUuid];
    case 'server_action':
      return [ServerActionRequest.decode(body).instanceUuid];
    case 'instance_action':
      return [InstanceActionRequest.decode(body).instanceUuid];
    case 'instance_step':
      return [InstanceStepRequest.decode(body).instance?.uuid ?? ''];
    case 'instance_step_result':
      return [InstanceStepResultRequest.decode(body).instanceUuid];
    default:
      return [];
  }
}

const header = (h: Record<string, unknown> | undefined, key: string): string => {
  const v = h?.[key];
  return v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('utf8') : String(v);
};

/** The `.dlq` queues of `vhost` that hold messages. */
function deadLetterQueues(vhost: string): string[] {
  const out = execFileSync('rabbitmqctl', ['-q', 'list_queues', '-p', vhost, 'name', 'messages'], { encoding: 'utf8', timeout: 20_000 });
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length === 2 && (f[0] ?? '').endsWith('.dlq') && Number(f[1]) > 0)
    .map((f) => f[0] as string);
}

/** Reads (without consuming) every message of the bus's dead-letter queues. */
async function readBus(url: string): Promise<DeadLetter[]> {
  const vhost = decodeURIComponent(new URL(url).pathname.slice(1));
  const queues = deadLetterQueues(vhost);
  if (queues.length === 0) return [];
  const conn = await amqp.connect(url);
  const out: DeadLetter[] = [];
  try {
    const ch = await conn.createChannel();
    for (const queue of queues) {
      // NOTE: unacked until the channel closes, so each message is read once and then requeued
      for (let m = await ch.get(queue, { noAck: false }); m !== false; m = await ch.get(queue, { noAck: false })) {
        const h = m.properties.headers;
        const method = header(h, 'cellsched-method');
        let instances: string[] = [];
        try {
          instances = instancesOf(method, m.content).filter((u) => u !== '');
        } catch {
          instances = [];
        }
        out.push({
          vhost,
          queue,
          method,
          code: header(h, 'cellsched-dlq-code'),
          reason: header(h, 'cellsched-dlq-message'),
          at: header(h, 'cellsched-dlq-at'),
          instances,
        });
      }
    }
  } finally {
    await conn.close();
  }
  return out;
}

/** Every cast dead-lettered on the system's buses (API and cells) since `sinceMs`. */
export async function deadLettersSince(stack: ChaosStack, sinceMs: number): Promise<DeadLetter[]> {
  const topo = stack.topology();
  const all: DeadLetter[] = [];
  for (const url of [topo.apiTransportUrl, ...topo.cells.map((c) => c.transportUrl)]) all.push(...(await readBus(url)));
  return all.filter((d) => Date.parse(d.at) >= sinceMs);
}
