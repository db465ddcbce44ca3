import { CAST_SERVICES, type CastServiceInfo } from '@cellsched/wire';
import { BUS_ERROR, BusError } from './errors';
import { parseRpcVersion, toSnakeCase, type RpcVersion } from './headers';

/** One method of a ts-proto grpc-js service definition (`EchoServiceService.echoCast`). */
export interface CastMethodDefinition {
  readonly path: string;
  requestSerialize(value: never): Buffer;
  requestDeserialize(bytes: Buffer): unknown;
}

/** A ts-proto grpc-js service definition object, e.g. `ComputeServiceService`. */
export type CastServiceDefinition = { readonly [method: string]: CastMethodDefinition };

/** The request type of one method, from its generated codec. */
export type RequestOf<M> = M extends { requestDeserialize(bytes: Buffer): infer R } ? R : never;

/** What the bus needs about a method: names and codec. */
export interface MethodEntry {
  /** Key in the definition object (`buildAndRunInstance`). */
  readonly key: string;
  /** Wire name, Nova style (`build_and_run_instance`). */
  readonly wireName: string;
  readonly definition: CastMethodDefinition;
}

/** What the bus needs about a service. */
export interface ServiceEntry {
  /** Full proto name: `cellsched.v1.ComputeService`. */
  readonly fullName: string;
  readonly topic: string;
  readonly rpcVersion: string;
  readonly version: RpcVersion;
  readonly methods: ReadonlyMap<string, MethodEntry>;
}

function splitPath(path: string): { service: string; method: string } {
  const match = /^\/([\w.]+)\/(\w+)$/.exec(path);
  if (!match?.[1] || !match[2]) throw new BusError(BUS_ERROR.invalidArgument, `not a gRPC method path: ${path}`, false);
  return { service: match[1], method: match[2] };
}

function lookupInfo(fullName: string): CastServiceInfo | undefined {
  const short = fullName.slice(fullName.lastIndexOf('.') + 1);
  return (CAST_SERVICES as Record<string, CastServiceInfo>)[short];
}

/**
 * Describes a generated service for the bus. `info` defaults to the service's entry in
 * `CAST_SERVICES` (its `rpc_version` and `topic` proto options); pass it to override
 * (tests send a newer major this way). Throws `bus.invalid_argument` for a definition
 * with no methods, mixed services, or no known topic/version.
 */
export function describeService(definition: CastServiceDefinition, info?: CastServiceInfo): ServiceEntry {
  const methods = new Map<string, MethodEntry>();
  let fullName: string | undefined;
  for (const [key, method] of Object.entries(definition)) {
    const parts = splitPath(method.path);
    if (fullName !== undefined && parts.service !== fullName) {
      throw new BusError(BUS_ERROR.invalidArgument, `definition mixes services ${fullName} and ${parts.service}`, false);
    }
    fullName = parts.service;
    methods.set(toSnakeCase(parts.method), { key, wireName: toSnakeCase(parts.method), definition: method });
  }
  if (fullName === undefined) throw new BusError(BUS_ERROR.invalidArgument, 'service definition has no methods', false);
  const resolved = info ?? lookupInfo(fullName);
  if (!resolved) throw new BusError(BUS_ERROR.invalidArgument, `${fullName} is not a cast service (not in CAST_SERVICES)`, false);
  const version = parseRpcVersion(resolved.rpcVersion);
  if (!version)
    throw new BusError(BUS_ERROR.invalidArgument, `${fullName}: rpcVersion "${resolved.rpcVersion}" is not "major.minor"`, false);
  if (!/^[a-z][a-z0-9_-]*$/.test(resolved.topic))
    throw new BusError(BUS_ERROR.invalidArgument, `${fullName}: bad topic "${resolved.topic}"`, false);
  return { fullName, topic: resolved.topic, rpcVersion: resolved.rpcVersion, version, methods };
}

/** Finds a method by its definition key; throws `bus.invalid_argument` when unknown. */
export function methodByKey(service: ServiceEntry, key: string): MethodEntry {
  for (const entry of service.methods.values()) if (entry.key === key) return entry;
  throw new BusError(BUS_ERROR.invalidArgument, `${service.fullName} has no method ${key}`, false);
}

/**
 * Routing key of a cast: `<topic>` or `<topic>.<server>` (`compute.host-12`). A server
 * name may hold letters, digits, `.`, `_`, `:` and `-` (host names), never the topic
 * wildcards `*` / `#`.
 */
export function routingKey(topic: string, server: string | undefined): string {
  if (server === undefined) return topic;
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(server)) {
    throw new BusError(BUS_ERROR.invalidArgument, `bad server name ${JSON.stringify(server)}: use a host name`, false);
  }
  return `${topic}.${server}`;
}
