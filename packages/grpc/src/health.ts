import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import {
  type Client,
  type ServerUnaryCall,
  type ServerWritableStream,
  makeGenericClientConstructor,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import type { GrpcClientConstructor } from './client';

/** `grpc.health.v1.HealthCheckResponse.ServingStatus`. */
export enum ServingStatus {
  UNKNOWN = 0,
  SERVING = 1,
  NOT_SERVING = 2,
  /** Only sent by Watch, for a service the server does not know (yet). */
  SERVICE_UNKNOWN = 3,
}

/** `grpc.health.v1.HealthCheckRequest`: `service` is "" for the server as a whole. */
export interface HealthCheckRequest {
  service: string;
}

/** `grpc.health.v1.HealthCheckResponse`. */
export interface HealthCheckResponse {
  status: ServingStatus;
}

// NOTE: the two messages are hand-encoded (one field each) instead of generated, so that
// `proto/` stays our own wire and the standard health protocol needs no extra dependency.
function encodeRequest(value: HealthCheckRequest): Buffer {
  const w = new BinaryWriter();
  if (value.service !== '') w.uint32(10).string(value.service);
  return Buffer.from(w.finish());
}

function decodeRequest(bytes: Buffer): HealthCheckRequest {
  const r = new BinaryReader(bytes);
  const out: HealthCheckRequest = { service: '' };
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === 10) out.service = r.string();
    else r.skip(tag & 7);
  }
  return out;
}

function encodeResponse(value: HealthCheckResponse): Buffer {
  const w = new BinaryWriter();
  if (value.status !== ServingStatus.UNKNOWN) w.uint32(8).int32(value.status);
  return Buffer.from(w.finish());
}

function decodeResponse(bytes: Buffer): HealthCheckResponse {
  const r = new BinaryReader(bytes);
  const out: HealthCheckResponse = { status: ServingStatus.UNKNOWN };
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === 8) out.status = r.int32() as ServingStatus;
    else r.skip(tag & 7);
  }
  return out;
}

const codec = {
  requestSerialize: encodeRequest,
  requestDeserialize: decodeRequest,
  responseSerialize: encodeResponse,
  responseDeserialize: decodeResponse,
};

/** The standard `grpc.health.v1.Health` service definition (grpc-js shape), usable by clients too. */
export const HealthService = {
  check: { path: '/grpc.health.v1.Health/Check' as const, requestStream: false as const, responseStream: false as const, ...codec },
  watch: { path: '/grpc.health.v1.Health/Watch' as const, requestStream: false as const, responseStream: true as const, ...codec },
} as const;

/** Client constructor for {@link HealthService}, for `createGrpcClient(HealthClient, ...)` and probes. */
export const HealthClient = makeGenericClientConstructor(
  HealthService as never,
  'grpc.health.v1.Health',
) as unknown as GrpcClientConstructor<typeof HealthService> &
  (new (...args: ConstructorParameters<GrpcClientConstructor<unknown>>) => Client);

/**
 * Serving status per service name ("" is the whole server), answering the standard health
 * protocol: Check returns the status or NOT_FOUND for an unknown service; Watch streams the
 * current status, then every change, until the caller cancels.
 */
export class HealthRegistry {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Map<string, Set<ServerWritableStream<HealthCheckRequest, HealthCheckResponse>>>();

  /** Sets a service's status and notifies its watchers. Idempotent. */
  setStatus(service: string, value: ServingStatus): void {
    const before = this.statuses.get(service);
    this.statuses.set(service, value);
    if (before === value) return;
    for (const w of this.watchers.get(service) ?? []) w.write({ status: value });
  }

  /** Current status of `service`, undefined when unknown. */
  getStatus(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Marks every known service NOT_SERVING (called when shutdown starts). */
  setAllNotServing(): void {
    for (const name of [...this.statuses.keys()]) this.setStatus(name, ServingStatus.NOT_SERVING);
  }

  /** Ends every Watch stream (called before the server shuts down). */
  endWatches(): void {
    for (const set of this.watchers.values()) for (const w of set) w.end();
    this.watchers.clear();
  }

  /** grpc-js implementation of {@link HealthService}. */
  implementation() {
    return {
      check: (call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, cb: sendUnaryData<HealthCheckResponse>) => {
        const value = this.statuses.get(call.request.service);
        if (value === undefined) cb({ code: status.NOT_FOUND, details: `unknown service '${call.request.service}'` });
        else cb(null, { status: value });
      },
      watch: (call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) => {
        const name = call.request.service;
        const set = this.watchers.get(name) ?? new Set();
        this.watchers.set(name, set);
        set.add(call);
        call.on('cancelled', () => set.delete(call));
        call.write({ status: this.statuses.get(name) ?? ServingStatus.SERVICE_UNKNOWN });
      },
    };
  }
}
