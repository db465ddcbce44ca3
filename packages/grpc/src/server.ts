import { Server, ServerCredentials, type ServerOptions, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { type ServiceHandlers, wrapUnary } from './handler';
import { HealthRegistry, HealthService, ServingStatus } from './health';
import { serviceNameOf, unaryMethods } from './types';

/** A service definition with its promise-based handlers, ready to add to a server. */
export interface ServiceBinding {
  name: string;
  definition: object;
  handlers: Record<string, unknown>;
}

/** Pairs a ts-proto service definition (e.g. `EchoServiceService`) with its handlers. */
export function bindService<S extends object>(definition: S, handlers: ServiceHandlers<S>): ServiceBinding {
  return { name: serviceNameOf(definition), definition, handlers: handlers as Record<string, unknown> };
}

/** Options of {@link startGrpcServer}. */
export interface GrpcServerOptions {
  host: string;
  /** 0 picks a free port; the bound one is in the result. */
  port: number;
  services: readonly ServiceBinding[];
  logger: Logger;
  /** tryShutdown waits this long for in-flight calls before forceShutdown. Default 5000 ms. */
  shutdownTimeoutMs?: number;
  serverOptions?: ServerOptions;
}

/** A started server. */
export interface RunningGrpcServer {
  /** The bound port (the real one when 0 was asked for). */
  port: number;
  /** `host:port`, ready for a client's address list. */
  address: string;
  /** Health statuses: "" and each service name start SERVING. */
  health: HealthRegistry;
  /**
   * Marks everything NOT_SERVING, refuses new calls, lets in-flight calls finish for up to
   * `timeoutMs` (default: the server option), then cancels what is left. Idempotent.
   */
  shutdown(timeoutMs?: number): Promise<void>;
}

function implementationOf(binding: ServiceBinding, logger: Logger): UntypedServiceImplementation {
  const impl: UntypedServiceImplementation = {};
  for (const [key, method] of unaryMethods(binding.definition)) {
    const handler = binding.handlers[key];
    if (typeof handler !== 'function') throw new Error(`service ${binding.name}: no handler for method ${key}`);
    impl[key] = wrapUnary(method.path, handler as Parameters<typeof wrapUnary>[1], logger);
  }
  return impl;
}

function bind(server: Server, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port)));
  });
}

function shutdownOnce(server: Server, health: HealthRegistry, logger: Logger, defaultMs: number) {
  let done: Promise<void> | undefined;
  return (timeoutMs = defaultMs): Promise<void> => {
    done ??= new Promise<void>((resolve) => {
      health.setAllNotServing();
      health.endWatches();
      const timer = setTimeout(() => {
        logger.warn({ timeout_ms: timeoutMs }, 'grpc graceful shutdown timed out, forcing');
        server.forceShutdown();
        resolve();
      }, timeoutMs);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return done;
  };
}

/**
 * Starts a grpc-js server (insecure credentials: TLS is the deployment's concern) with the
 * given services plus the standard `grpc.health.v1.Health` service. Fails if the port
 * cannot be bound or a unary method has no handler.
 */
export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const server = new Server(options.serverOptions);
  const health = new HealthRegistry();
  for (const binding of options.services) {
    server.addService(binding.definition as never, implementationOf(binding, options.logger));
  }
  server.addService(HealthService as never, health.implementation() as never);
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const port = await bind(server, `${host}:${options.port}`);
  health.setStatus('', ServingStatus.SERVING);
  for (const binding of options.services) health.setStatus(binding.name, ServingStatus.SERVING);
  options.logger.info({ address: `${options.host}:${port}`, services: options.services.map((s) => s.name) }, 'grpc server listening');
  return {
    port,
    address: `${host}:${port}`,
    health,
    shutdown: shutdownOnce(server, health, options.logger, options.shutdownTimeoutMs ?? 5000),
  };
}
