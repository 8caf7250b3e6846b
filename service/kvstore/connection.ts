import { EventEmitter } from 'node:events';
import Redis, { type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { Settings } from '../../configs';

/**
 * What the service knows about the key-value store right now: `unresponsive` means the
 * connection is open but commands time out (a paused, stopped or overloaded server); it counts
 * as down, like `disconnected`, until a PING answers in time again.
 */
export type KvstoreState = 'not_configured' | 'connecting' | 'connected' | 'unresponsive' | 'disconnected';

/** Options of `KvstoreConnection`. */
export interface KvstoreConnectionOptions {
  /**
   * How often an open connection is checked with a PING (timed out after the command timeout),
   * ms; a timed-out PING makes the state `unresponsive`, the next answered one `connected`.
   * @default 1000
   */
  readonly heartbeatMs?: number;
}

/** True for the error ioredis rejects a command with when `commandTimeout` passes. */
export function isCommandTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'Command timed out';
}

/**
 * ioredis options for a store that must never slow or hang a request: no offline queue (commands
 * fail at once while disconnected), a short per-command timeout, no per-request retries, and
 * reconnection forever in the background with capped backoff.
 */
export function kvstoreOptions(settings: Settings): RedisOptions {
  return {
    enableOfflineQueue: false,
    commandTimeout: settings.kvstore.commandTimeoutMs,
    connectTimeout: settings.kvstore.connectTimeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2000),
    lazyConnect: true,
    ...(settings.kvstore.password ? { password: settings.kvstore.password } : {}),
  };
}

/**
 * The URL without its password when `KVSTORE_PASSWORD` is set: ioredis lets a password in the URL
 * win over the `password` option, and the setting is documented to override the URL's.
 */
export function withoutPassword(url: string, password: string | undefined): string {
  if (!password) return url;
  const u = new URL(url);
  u.password = '';
  return u.toString();
}

/**
 * One Redis connection shared by the service (rate limiting, content), with its state and
 * `up`/`down` events so users can switch to their in-memory fallbacks and back. Logs one warning
 * per outage, not per command.
 *
 * A server that stops answering without closing the socket (DEBUG SLEEP, SIGSTOP, a stuck host)
 * never fires `close`: the heartbeat PING and the timeouts users report (`commandFailed`) turn
 * the state `unresponsive` and emit `down`, so writes fail fast with nothing sent and `/health`
 * says `degraded`; an answered PING brings `connected` and `up` back.
 */
export class KvstoreConnection extends EventEmitter {
  private current: KvstoreState;
  /** The client, or undefined when no URL is configured. */
  readonly client: Redis | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private pinging = false;
  private readonly commandTimeoutMs: number;

  constructor(
    url: string | undefined,
    settings: Settings,
    private readonly logger: Logger,
    factory: (url: string, opts: RedisOptions) => Redis = (u, o) => new Redis(u, o),
    options: KvstoreConnectionOptions = {},
  ) {
    super();
    this.commandTimeoutMs = settings.kvstore.commandTimeoutMs;
    if (!url) {
      this.current = 'not_configured';
      this.client = undefined;
      return;
    }
    this.current = 'connecting';
    this.client = factory(withoutPassword(url, settings.kvstore.password), kvstoreOptions(settings));
    this.client.on('ready', () => this.transition('connected'));
    this.heartbeat = setInterval(() => this.ping(), options.heartbeatMs ?? 1000);
    this.heartbeat.unref();
    this.client.on('error', (err: Error) => {
      if (this.current !== 'disconnected') this.logger.debug({ err: err.message }, 'kvstore error');
    });
    this.client.on('close', () => this.transition('disconnected'));
    this.client.on('end', () => this.transition('disconnected'));
  }

  /** Current state. */
  get state(): KvstoreState {
    return this.current;
  }

  /** True when commands can be sent now. */
  get available(): boolean {
    return this.current === 'connected';
  }

  /** True when a configured store is down: unreachable or not answering (`/health` says `degraded`). */
  get degraded(): boolean {
    return this.current === 'disconnected' || this.current === 'unresponsive';
  }

  /**
   * Users report their failed commands here: a timeout while connected means the server stopped
   * answering, which the next heartbeat would find too, only later.
   */
  commandFailed(err: unknown): void {
    if (isCommandTimeout(err) && this.current === 'connected') this.transition('unresponsive');
  }

  private ping(): void {
    const c = this.client;
    if (!c || this.pinging || (this.current !== 'connected' && this.current !== 'unresponsive')) return;
    this.pinging = true;
    c.ping().then(
      () => {
        this.pinging = false;
        if (this.current === 'unresponsive') this.transition('connected');
      },
      (err: unknown) => {
        this.pinging = false;
        this.commandFailed(err);
      },
    );
  }

  private transition(next: KvstoreState): void {
    const prev = this.current;
    if (prev === next) return;
    this.current = next;
    if (next === 'connected') {
      if (prev === 'disconnected') this.logger.warn('kvstore is reachable again; shared state resumes');
      else if (prev === 'unresponsive') this.logger.warn('kvstore answers again; shared state resumes');
      else this.logger.info('kvstore connected');
      this.emit('up');
    } else if (next === 'unresponsive') {
      this.logger.warn(
        { timeout_ms: this.commandTimeoutMs },
        'kvstore connected but not answering in time (paused or overloaded?); falling back to in-memory state until it answers',
      );
      this.emit('down');
    } else if (next === 'disconnected') {
      // Already down when it was unresponsive: one warning and one `down` per outage.
      if (prev === 'unresponsive') return;
      this.logger.warn('kvstore unreachable; falling back to in-memory state until it returns');
      this.emit('down');
    }
  }

  /** Starts connecting; resolves once connected or after the first failure (never rejects). */
  async connect(): Promise<void> {
    if (!this.client) return;
    try {
      await this.client.connect();
    } catch {
      this.transition('disconnected');
    }
  }

  /** Closes the connection for good. */
  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (!this.client) return;
    this.client.removeAllListeners('close');
    this.client.removeAllListeners('end');
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}
