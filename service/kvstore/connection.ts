import { EventEmitter } from 'node:events';
import Redis, { type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { Settings } from '../../configs';

/** What the service knows about the key-value store right now. */
export type KvstoreState = 'not_configured' | 'connecting' | 'connected' | 'disconnected';

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
 */
export class KvstoreConnection extends EventEmitter {
  private current: KvstoreState;
  /** The client, or undefined when no URL is configured. */
  readonly client: Redis | undefined;

  constructor(
    url: string | undefined,
    settings: Settings,
    private readonly logger: Logger,
    factory: (url: string, opts: RedisOptions) => Redis = (u, o) => new Redis(u, o),
  ) {
    super();
    if (!url) {
      this.current = 'not_configured';
      this.client = undefined;
      return;
    }
    this.current = 'connecting';
    this.client = factory(withoutPassword(url, settings.kvstore.password), kvstoreOptions(settings));
    this.client.on('ready', () => this.transition('connected'));
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

  private transition(next: KvstoreState): void {
    const prev = this.current;
    if (prev === next) return;
    this.current = next;
    if (next === 'connected') {
      if (prev === 'disconnected') this.logger.warn('kvstore is reachable again; shared state resumes');
      else this.logger.info('kvstore connected');
      this.emit('up');
    } else if (next === 'disconnected') {
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
