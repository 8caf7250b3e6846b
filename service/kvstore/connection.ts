import { EventEmitter } from 'node:events';
import { Cluster, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import {
  DEFAULT_STORE_TOPOLOGY,
  defaultDurability,
  needsWaitaof,
  type KvstoreDurability,
  type KvstoreMode,
  type Settings,
  type StoreTopologySettings,
} from '../../configs';
import { createRedisClient, detectMode, modeMismatch, type RedisClient, type StoreTarget } from './client-factory';
import { EvictionWatch } from './eviction-watch';

/**
 * What the service knows about the key-value store right now: `unresponsive` means the
 * connection is open but commands time out (a paused, stopped or overloaded server); it counts
 * as down, like `disconnected`, until a PING answers in time again. `degraded` means it answers
 * but refuses or fails the service's commands (CROSSSLOT, MOVED or NOSCRIPT loops, CLUSTERDOWN,
 * READONLY, one cluster master unreachable): commands are still sent, and it is `connected` again
 * once no failure has been reported for `degradedHoldMs`.
 */
export type KvstoreState = 'not_configured' | 'connecting' | 'connected' | 'degraded' | 'unresponsive' | 'disconnected';

/**
 * Whether content writes meet their durability level (`KVSTORE_DURABILITY`), as the last write
 * found: `ok`; `no_replica` (the level needs a replica and none confirmed the write in time: none
 * connected, e.g. after a failover until the old master rejoins as a replica); `not_on_disk` (the
 * primary did not confirm its append-only file fsync in time). The server itself answers: the
 * connection state stays `connected`, rate limits stay shared, only content writes are refused.
 */
export type WriteConfirmation = 'ok' | 'no_replica' | 'not_on_disk';

/** Options of `KvstoreConnection`. */
export interface KvstoreConnectionOptions {
  /**
   * How often an open connection is checked with a PING (timed out after the command timeout),
   * ms; a timed-out PING makes the state `unresponsive`, the next answered one `connected`.
   * @default 1000
   */
  readonly heartbeatMs?: number;
  /** Standalone, Cluster or Sentinel (`KVSTORE_MODE` …). @default the settings' kvstore topology */
  readonly topology?: StoreTopologySettings;
  /** Prefix of the variables that configure this store, for messages. @default 'KVSTORE' */
  readonly variablePrefix?: 'KVSTORE' | 'RATELIMIT_STORAGE';
  /** How long without a reported command failure turns `degraded` back into `connected`, ms. @default 5000 */
  readonly degradedHoldMs?: number;
  /**
   * Check at `connect` that the server answers in the configured mode (`INFO server`), and refuse
   * to start otherwise. @default true
   */
  readonly verifyMode?: boolean;
  /**
   * The content durability level, checked at `connect` against the server: the `*-disk` levels
   * need WAITAOF (Redis 7.2 or later) and `appendonly yes` on the primary.
   * @default KVSTORE_DURABILITY (or its mode default) for the kvstore; none for RATELIMIT_STORAGE
   */
  readonly durability?: KvstoreDurability;
  /**
   * Content lives in this store: a `maxmemory-policy` that may evict keys without a TTL is a
   * startup error (unless `KVSTORE_ACCEPT_EVICTION`), and, changed later, refuses content writes.
   * @default true for the kvstore, false for RATELIMIT_STORAGE (there it is a warning)
   */
  readonly holdsContent?: boolean;
  /**
   * How often the memory policy and `evicted_keys` are read while connected, ms (CONFIG GET,
   * INFO stats and INFO server: three small commands per poll and master).
   * @default KVSTORE_EVICTION_CHECK_MS (5000)
   */
  readonly evictionCheckMs?: number;
  /** How long health stays degraded after an eviction seen in a store that holds content, ms. @default 300000 */
  readonly evictionHoldMs?: number;
}

/** Raised at startup when the server cannot give the configured `KVSTORE_DURABILITY`. */
export class KvstoreDurabilityError extends Error {
  /** Stable code for tests and logs. */
  readonly code = 'ERR_KVSTORE_DURABILITY';
  constructor(message: string) {
    super(message);
    this.name = 'KvstoreDurabilityError';
  }
}

/**
 * Why a server cannot give `level` (`INFO server` and `INFO persistence` of each primary), or
 * undefined when it can. Only the `*-disk` levels have requirements a server can lack.
 */
export function durabilityProblem(level: KvstoreDurability, info: string, where: string): string | undefined {
  if (!needsWaitaof(level)) return undefined;
  const version = /redis_version:(\d+)\.(\d+)/.exec(info);
  const [major, minor] = version ? [Number(version[1]), Number(version[2])] : [0, 0];
  const accepted = 'accepted: primary or replica with this server, or Redis 7.2 or later with appendonly yes';
  if (major < 7 || (major === 7 && minor < 2)) {
    return `KVSTORE_DURABILITY=${level} needs WAITAOF (Redis 7.2 or later), but ${where} runs Redis ${version ? `${version[1]}.${version[2]}` : '(unknown version)'}; ${accepted}`;
  }
  if (!/aof_enabled:1/.test(info)) {
    return `KVSTORE_DURABILITY=${level} needs an append-only file on the primary, but ${where} has appendonly no (set appendonly yes in its redis.conf); ${accepted}`;
  }
  return undefined;
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
  readonly client: RedisClient | undefined;
  /** How the store is reached. */
  readonly mode: KvstoreMode;
  private readonly target: StoreTarget | undefined;
  private readonly degradedHoldMs: number;
  private readonly verify: boolean;
  /** The content durability level checked at connect (none for the rate limiter's own store). */
  readonly durability: KvstoreDurability | undefined;
  private lastFailureAt = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private pinging = false;
  private readonly commandTimeoutMs: number;
  private confirmation: WriteConfirmation = 'ok';
  /** The client's last error message (ioredis's own: no credentials), for the unreachable warning. */
  private lastError: string | undefined;
  /** The server's memory policy and evictions (eviction-watch.ts). */
  readonly eviction: EvictionWatch;
  private evictionTimer: NodeJS.Timeout | undefined;
  private evictionChecking = false;
  /** Set once `connect` has run its checks: a later `ready` is a reconnect. */
  private startChecked = false;
  /** Reconnection attempts the client scheduled since the start (logged at debug). */
  private reconnects = 0;

  constructor(
    url: string | undefined,
    settings: Settings,
    private readonly logger: Logger,
    factory?: (url: string, opts: RedisOptions) => RedisClient,
    options: KvstoreConnectionOptions = {},
  ) {
    super();
    this.commandTimeoutMs = settings.kvstore.commandTimeoutMs;
    const topology = options.topology ?? settings.kvstore.topology ?? DEFAULT_STORE_TOPOLOGY;
    this.mode = topology.mode;
    this.degradedHoldMs = options.degradedHoldMs ?? 5000;
    this.verify = options.verifyMode ?? true;
    this.durability =
      options.durability ??
      ((options.variablePrefix ?? 'KVSTORE') === 'KVSTORE'
        ? (settings.kvstore.durability ?? defaultDurability(this.mode))
        : undefined);
    this.eviction = new EvictionWatch({
      logger,
      holdsContent: options.holdsContent ?? (options.variablePrefix ?? 'KVSTORE') === 'KVSTORE',
      accept: settings.kvstore.acceptEviction,
      holdMs: options.evictionHoldMs,
    });
    if (!url) {
      this.current = 'not_configured';
      this.client = undefined;
      return;
    }
    const variablePrefix = options.variablePrefix ?? 'KVSTORE';
    this.target = {
      url: withoutPassword(url, settings.kvstore.password),
      password: settings.kvstore.password,
      topology,
      variablePrefix,
    };
    const target = this.target;
    const make =
      factory ?? ((u: string, o: RedisOptions) => createRedisClient({ ...target, url: u, password: undefined }, o));
    this.current = 'connecting';
    this.client = make(target.url, kvstoreOptions(settings));
    this.client.on('ready', () => {
      this.transition('connected');
      // Every reconnect may reach another server (a restart, a failover): read its policy again.
      if (this.startChecked) this.checkEviction();
    });
    this.heartbeat = setInterval(() => this.ping(), options.heartbeatMs ?? 1000);
    this.heartbeat.unref();
    this.evictionTimer = setInterval(
      () => this.checkEviction(),
      options.evictionCheckMs ?? settings.kvstore.evictionCheckMs,
    );
    this.evictionTimer.unref();
    this.client.on('error', (err: Error) => {
      this.lastError = err.message;
      if (this.current !== 'disconnected') this.logger.debug({ err: err.message }, 'kvstore error');
    });
    this.client.on('close', () => this.transition('disconnected'));
    this.client.on('end', () => this.transition('disconnected'));
    // At debug only: what a test of a store that stays away waits on, instead of a fixed sleep.
    this.client.on('reconnecting', (delayMs: number) =>
      this.logger.debug({ attempt: ++this.reconnects, delay_ms: delayMs }, 'kvstore reconnecting'),
    );
  }

  /** Current state. */
  get state(): KvstoreState {
    return this.current;
  }

  /** Whether content writes met their durability level, as the last write found (`/health` `kvstore_writes`). */
  get writes(): WriteConfirmation {
    return this.confirmation;
  }

  /**
   * The content store reports what the last write's WAIT / WAITAOF found; a change is logged
   * once (a missing replica is its own cause, not a paused or overloaded server).
   */
  writeConfirmation(now: WriteConfirmation, level: string): void {
    const prev = this.confirmation;
    if (prev === now) return;
    this.confirmation = now;
    if (now === 'ok') {
      this.logger.warn(
        { durability: level, was: prev },
        'kvstore confirms content writes again at the configured durability; writes resume',
      );
    } else if (now === 'no_replica') {
      this.logger.warn(
        { durability: level, mode: this.mode },
        'no replica to confirm content writes (KVSTORE_DURABILITY needs one): writes are refused with 503 until a replica is connected again; the kvstore itself answers',
      );
    } else {
      this.logger.warn(
        { durability: level, mode: this.mode },
        'the kvstore primary does not confirm content writes on disk in time (WAITAOF): writes are refused with 503 until it does',
      );
    }
  }

  /** True when commands can be sent now (also while `degraded`: they may work, and are the only way to know). */
  get available(): boolean {
    return this.current === 'connected' || this.current === 'degraded';
  }

  /** Reads the memory policy and `evicted_keys` once (one reading at a time; skipped while down). */
  private checkEviction(): void {
    const c = this.client;
    if (!c || !this.startChecked || this.evictionChecking || !this.available) return;
    this.evictionChecking = true;
    this.eviction
      .check(c)
      .catch(() => undefined)
      .finally(() => {
        this.evictionChecking = false;
      });
  }

  /** True when a configured store is down, refusing commands, or cannot confirm writes (`/health` says `degraded`). */
  get degraded(): boolean {
    return (
      this.current === 'disconnected' ||
      this.current === 'unresponsive' ||
      this.current === 'degraded' ||
      this.confirmation !== 'ok'
    );
  }

  /**
   * Users report their failed commands here: a timeout while connected means the server stopped
   * answering, which the next heartbeat would find too, only later; any other failure while
   * connected (a refusal, a cluster node down) makes the state `degraded` for `degradedHoldMs`.
   */
  commandFailed(err: unknown): void {
    if (isCommandTimeout(err) && (this.current === 'connected' || this.current === 'degraded')) {
      this.transition('unresponsive');
    } else if (this.current === 'connected' || this.current === 'degraded') {
      this.lastFailureAt = Date.now();
      if (this.current === 'connected') {
        this.logger.warn(
          { err: err instanceof Error ? err.message : String(err), mode: this.mode },
          'kvstore connected but refusing or failing commands; health says degraded until they succeed again',
        );
        this.current = 'degraded';
      }
    }
  }

  private ping(): void {
    const c = this.client;
    if (this.current === 'degraded' && Date.now() - this.lastFailureAt >= this.degradedHoldMs) {
      this.current = 'connected';
      this.logger.warn({ mode: this.mode }, 'kvstore commands succeed again; health says connected');
    }
    if (
      !c ||
      this.pinging ||
      (this.current !== 'connected' && this.current !== 'unresponsive' && this.current !== 'degraded')
    )
      return;
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
      // The cause (refused, WRONGPASS, an unverified certificate) tells an outage from a misconfiguration.
      this.logger.warn(
        { err: this.lastError },
        'kvstore unreachable; falling back to in-memory state until it returns',
      );
      this.emit('down');
    }
  }

  /**
   * Starts connecting; resolves once connected or after the first failure. Rejects only with a
   * `KvstoreModeError`, when the store answers in another mode than configured (a standalone
   * setting pointed at a cluster node, or the reverse): that is a configuration fault, and the
   * service must not start; with a `KvstoreDurabilityError` (the server cannot give the level); and
   * with a `KvstoreEvictionError` when content lives here and the server's `maxmemory-policy` may
   * evict it (eviction-policy.ts). An unreachable store cannot be checked and is not an error.
   */
  async connect(): Promise<void> {
    if (!this.client) return;
    if (this.verify && this.target) {
      let actual: KvstoreMode | undefined;
      try {
        actual = await detectMode(this.target, Math.max(this.commandTimeoutMs, 1000));
      } catch (err) {
        this.logger.warn(
          { err: (err as Error).message, mode: this.mode },
          'kvstore mode could not be checked (unreachable?); trusting the setting',
        );
      }
      if (actual !== undefined && actual !== this.mode) throw modeMismatch(this.target, actual);
    }
    try {
      await this.client.connect();
      // A cluster client resolves `connect` before it emits `ready`.
      if (this.client.status === 'ready' && this.current === 'connecting') this.transition('connected');
    } catch {
      this.transition('disconnected');
      // Unreachable now: the policy is read at the first `ready` (and an evicting one then
      // refuses content writes, as a change at run time does).
      this.startChecked = true;
      return;
    }
    if (this.verify) await this.checkDurability();
    await this.eviction.atStart(this.client);
    this.startChecked = true;
  }

  /**
   * Refuses to start when a primary cannot give the durability level (WAITAOF missing, no
   * append-only file): every write would otherwise be refused. A server that does not answer
   * now cannot be checked; writes then say what fails.
   */
  private async checkDurability(): Promise<void> {
    const level = this.durability;
    const c = this.client;
    if (!level || !needsWaitaof(level) || !c) return;
    const primaries = c instanceof Cluster ? c.nodes('master') : [c];
    for (const p of primaries) {
      let info: string;
      try {
        info = `${await p.info('server')}\n${await p.info('persistence')}`;
      } catch (err) {
        this.logger.warn(
          { err: (err as Error).message, durability: level },
          'kvstore durability level could not be checked (unreachable?); trusting the setting',
        );
        return;
      }
      const where =
        c instanceof Cluster ? `the cluster master ${p.options.host}:${p.options.port}` : 'the kvstore primary';
      const problem = durabilityProblem(level, info, where);
      if (problem) throw new KvstoreDurabilityError(problem);
    }
  }

  /** Closes the connection for good. */
  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.evictionTimer) clearInterval(this.evictionTimer);
    if (!this.client) return;
    this.client.removeAllListeners('close');
    this.client.removeAllListeners('end');
    try {
      await this.client.quit();
    } catch {
      // Closed already or unreachable: disconnect below ends it either way.
    } finally {
      // After QUIT too: in sentinel mode only disconnect() closes the failover detector's sentinel
      // clients (ioredis), which would otherwise reconnect every minute and keep the process alive.
      this.client.disconnect();
    }
  }
}
