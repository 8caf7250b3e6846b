import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor, type WaitForOptions } from './ports';

/** One notification as the receiver got it. */
export interface Delivery {
  /** Request path: which receiver URL was used (the stack gives each kind its own path). */
  readonly path: string;
  readonly method: string;
  /** Lower-cased header names, as Node gives them (`authorization`, `content-type`, …). */
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  readonly body: unknown;
  readonly receivedAt: number;
}

/**
 * A small HTTP server on a free loopback port standing in for the chat service and the generic
 * webhook: it records every request (path, headers, parsed body) and answers 200, so a test can
 * ask which route delivered what and with which credentials.
 */
export class WebhookReceiver {
  private readonly received: Delivery[] = [];
  private readonly listeners: Array<(d: Delivery) => void> = [];

  private readonly server: Server;

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: keep the text
        }
        const d: Delivery = {
          path: req.url ?? '/',
          method: req.method ?? 'GET',
          headers: req.headers,
          body,
          receivedAt: Date.now(),
        };
        this.received.push(d);
        for (const l of this.listeners) l(d);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
  }

  /** Starts listening on 127.0.0.1 (`port` 0 = any free port). */
  static async start(port = 0): Promise<WebhookReceiver> {
    const self = new WebhookReceiver();
    await new Promise<void>((resolve, reject) => {
      self.server.once('error', reject);
      self.server.listen(port, '127.0.0.1', () => resolve());
    });
    return self;
  }

  /** The port it listens on. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:<port><path>`. */
  url(path = '/'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Everything received so far, oldest first. */
  get deliveries(): readonly Delivery[] {
    return this.received;
  }

  /** Calls `fn` for every delivery from now on (the interactive stack prints them). */
  onDelivery(fn: (d: Delivery) => void): void {
    this.listeners.push(fn);
  }

  /** Resolves with the first delivery (past or future) that `match` accepts. */
  async waitFor(what: string, match: (d: Delivery) => boolean, opts: WaitForOptions = {}): Promise<Delivery> {
    return waitFor(
      `a delivery of ${what}`,
      () => {
        const hit = this.received.find(match);
        if (hit) return hit;
        throw new Error(
          `${this.received.length} deliveries, none matching; paths: ${[...new Set(this.received.map((d) => d.path))].join(', ') || 'none'}`,
        );
      },
      { timeoutMs: opts.timeoutMs ?? 30000, intervalMs: opts.intervalMs ?? 200 },
    );
  }

  /** Stops listening. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
