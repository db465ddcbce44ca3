// A TCP proxy in front of the broker, so a test can cut this client's connections and
// refuse reconnections (a network outage) without disturbing the shared broker.
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private accepting = true;

  private constructor(private readonly server: Server) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => proxy?.accept(client, targetHost, targetPort));
    proxy = new TcpProxy(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Drops every open connection and refuses new ones until `restore`. */
  cut(): void {
    this.accepting = false;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.accepting = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, host: string, port: number): void {
    if (!this.accepting) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host, port });
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(a);
      a.pipe(b);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
    }
  }
}
