import { clearImmediate, setImmediate } from "node:timers";
import type { Presence } from "@colyseus/core";

/**
 * Messages between the server processes of a cluster, over Redis pub/sub (Colyseus's presence, which the browser
 * rooms use too): each node listens on a channel of its own and on one every node hears. What one node sends another
 * arrives in the order it was sent (one publishing connection, one channel), which the bot frames it carries rely on.
 * Messages are gathered per destination and published once per turn of the event loop: a batch of frames is one
 * Redis round trip, not one each.
 */

type Handler = (body: never, from: string) => unknown;

interface Envelope {
  /** The kind of message ("" for a reply). */
  readonly k: string;
  /** The sending node. */
  readonly f: string;
  readonly b?: unknown;
  /** A request's number, for its reply. */
  readonly q?: number;
  /** The request a reply answers, and its answer or failure. */
  readonly r?: number;
  readonly e?: string;
}

/** A request another node did not answer in time (it stopped, or is stalled). */
export class NoAnswerError extends Error {
  constructor(node: string, kind: string, ms: number) {
    super(`node ${node} did not answer \`${kind}\` within ${ms} ms`);
    this.name = "NoAnswerError";
  }
}

export class Bus {
  private readonly outbox = new Map<string, Envelope[]>();
  private flush?: ReturnType<typeof setImmediate>;
  private readonly handlers = new Map<string, Handler>();
  private readonly asked = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private nextRequest = 1;
  private closed = false;
  private readonly listener = (batch: Envelope[]) => this.receive(batch);

  private constructor(private readonly presence: Presence, private readonly prefix: string, readonly node: string) {}

  /** Listens on `node`'s channel and the cluster's; `prefix` keeps clusters on one Redis apart. */
  static async open(presence: Presence, prefix: string, node: string): Promise<Bus> {
    const bus = new Bus(presence, prefix, node);
    await presence.subscribe(bus.channel(node), bus.listener);
    await presence.subscribe(bus.channel(), bus.listener);
    return bus;
  }

  private channel(node?: string): string {
    return node === undefined ? `${this.prefix}all` : `${this.prefix}n:${node}`;
  }

  /**
   * What to do with messages of `kind`: the handler's answer (or its promise's) goes back to a request; a throw is
   * the request's failure, or logged for a one-way message.
   */
  on<T>(kind: string, handler: (body: T, from: string) => unknown): void {
    this.handlers.set(kind, handler as Handler);
  }

  /** A one-way message to `node`, after everything sent there before it. */
  send(node: string, kind: string, body?: unknown): void {
    this.post(this.channel(node), { k: kind, f: this.node, b: body });
  }

  /** A one-way message to every node, this one included. */
  broadcast(kind: string, body?: unknown): void {
    this.post(this.channel(), { k: kind, f: this.node, b: body });
  }

  /** A request to `node`: its handler's answer, or NoAnswerError after `timeoutMs`. */
  ask<T>(node: string, kind: string, body?: unknown, timeoutMs = 2000): Promise<T> {
    const q = this.nextRequest++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.asked.delete(q);
        reject(new NoAnswerError(node, kind, timeoutMs));
      }, timeoutMs);
      this.asked.set(q, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.post(this.channel(node), { k: kind, f: this.node, b: body, q });
    });
  }

  private post(channel: string, envelope: Envelope): void {
    if (this.closed) return;
    let batch = this.outbox.get(channel);
    if (!batch) this.outbox.set(channel, batch = []);
    batch.push(envelope);
    this.flush ??= setImmediate(() => this.publish());
  }

  private publish(): void {
    this.flush = undefined;
    for (const [channel, batch] of this.outbox) {
      this.presence.publish(channel, batch).then(
        () => {
          if (!this.failing) return;
          this.failing = false;
          for (const listener of this.recovered) listener();
        },
        (error: Error) => {
          // Once while Redis is away, not once a batch.
          if (!this.failing) console.warn(`ludus: cluster bus: messages to peers are lost: ${error.message}`);
          this.failing = true;
        },
      );
    }
    this.outbox.clear();
  }

  /** Set while publishing fails (Redis away). */
  private failing = false;
  private readonly recovered = new Set<() => void>();

  /**
   * Told when messages go out again after Redis was away: what was sent meanwhile, either way, was lost, so what
   * depends on it must be asked again.
   */
  onRecovered(listener: () => void): void {
    this.recovered.add(listener);
  }

  private receive(batch: Envelope[]): void {
    if (!Array.isArray(batch)) return;
    for (const envelope of batch) {
      if (envelope.r !== undefined) {
        const waiting = this.asked.get(envelope.r);
        this.asked.delete(envelope.r);
        if (envelope.e !== undefined) waiting?.reject(new Error(envelope.e));
        else waiting?.resolve(envelope.b);
        continue;
      }
      this.handle(envelope);
    }
  }

  private handle({ k, f, b, q }: Envelope): void {
    const reply = (answer: { b?: unknown; e?: string }) => {
      if (q !== undefined) this.post(this.channel(f), { k: "", f: this.node, r: q, ...answer });
    };
    const handler = this.handlers.get(k);
    if (!handler) return reply({ e: `node ${this.node} does not handle \`${k}\`` });
    let answer: unknown;
    try {
      answer = handler(b as never, f);
    } catch (error) {
      if (q === undefined) console.error(`ludus: cluster bus: \`${k}\` from ${f} failed:`, error);
      return reply({ e: (error as Error).message });
    }
    if (q === undefined) {
      if (answer instanceof Promise) {
        answer.catch((error) => console.error(`ludus: cluster bus: \`${k}\` from ${f} failed:`, error));
      }
      return;
    }
    Promise.resolve(answer).then((value) => reply({ b: value }), (error: Error) => reply({ e: error.message }));
  }

  /** Stops listening; requests still waiting fail. */
  async close(): Promise<void> {
    if (this.flush) {
      clearImmediate(this.flush);
      this.publish();
    }
    this.closed = true;
    for (const waiting of this.asked.values()) waiting.reject(new Error("the cluster bus closed"));
    this.asked.clear();
    await this.presence.unsubscribe(this.channel(this.node), this.listener);
    await this.presence.unsubscribe(this.channel(), this.listener);
  }
}
