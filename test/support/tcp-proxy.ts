import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy in front of a server (PostgreSQL), to make it unreachable the ways a network or a stopped
 * database does: `refuse` closes every connection and the listener (new ones get ECONNREFUSED), `stall`
 * keeps connections open but carries nothing (a black hole) until `up`.
 */
export class TcpProxy {
  private server?: Server;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private stalled = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async up(): Promise<void> {
    if (this.stalled) { for (const pair of this.pairs) this.flow(pair); }
    this.stalled = false;
    if (this.server) return;
    const server = createServer((client) => this.carry(client));
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Closes the listener and every connection: the database is gone. */
  async refuse(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Connections stay open but nothing gets through, either way. */
  stall(): void {
    this.stalled = true;
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  private flow({ client, upstream }: { client: Socket; upstream: Socket }): void {
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private carry(client: Socket): void {
    const upstream = connect(this.target.port, this.target.host);
    const pair = { client, upstream };
    this.pairs.add(pair);
    if (!this.stalled) this.flow(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  }
}
