import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { ManagedProcess } from './binary';
import { freePort, waitForPort } from './ports';
import type { TlsCerts } from './tls-certs';

/** What a `RedisServer` runs and how it persists. */
export interface RedisServerOptions {
  /** An append-only file, kept across `kill`/`restart`. @default false */
  readonly appendonly?: boolean;
  /** Its fsync policy. @default 'always' */
  readonly appendfsync?: 'always' | 'everysec';
  /** Starts as a replica of the server on this loopback port. @default none */
  readonly replicaOf?: number;
  /** More arguments, e.g. `['--repl-diskless-sync-delay', '0']`. @default none */
  readonly args?: readonly string[];
  /** Another server binary (valkey-server, `valkeyServer()`). @default 'redis-server' */
  readonly binary?: string;
}

/**
 * A real `redis-server` on a free loopback port for one test file: no persistence unless
 * `appendonly` (then an append-only file, fsynced on every write unless `appendfsync` says otherwise).
 */
export class RedisServer {
  readonly process: ManagedProcess;
  private readonly dir: string;

  private constructor(
    readonly port: number,
    readonly password?: string,
    /** When set, the server speaks TLS only (plain port off), with this certificate. */
    readonly tls?: TlsCerts,
    opts: RedisServerOptions = {},
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
    const listen = tls
      ? [
          '--port',
          '0',
          '--tls-port',
          String(port),
          '--tls-cert-file',
          tls.certFile,
          '--tls-key-file',
          tls.keyFile,
          '--tls-ca-cert-file',
          tls.caFile,
          '--tls-auth-clients',
          'no',
        ]
      : ['--port', String(port)];
    const persistence = opts.appendonly
      ? ['--appendonly', 'yes', '--appendfsync', opts.appendfsync ?? 'always']
      : ['--appendonly', 'no'];
    const args = [...listen, '--bind', '127.0.0.1', '--save', '', ...persistence, '--dir', this.dir];
    if (opts.args) args.push(...opts.args);
    if (opts.replicaOf) args.push('--replicaof', '127.0.0.1', String(opts.replicaOf));
    if (password) args.push('--requirepass', password);
    this.process = new ManagedProcess(
      opts.binary ? 'valkey-server' : 'redis-server',
      opts.binary ?? 'redis-server',
      args,
    );
  }

  /**
   * Starts a server (on `port`, else a free one) and waits until it accepts connections. A free port
   * can be taken by another process between being found and being bound: then another port is tried.
   */
  static async start(
    opts: { password?: string; port?: number; tls?: TlsCerts } & RedisServerOptions = {},
  ): Promise<RedisServer> {
    for (let attempt = 1; ; attempt++) {
      const server = new RedisServer(opts.port ?? (await freePort()), opts.password, opts.tls, opts);
      try {
        await server.restart();
        return server;
      } catch (err) {
        await server.stop();
        if (opts.port !== undefined || attempt >= 5) throw err;
      }
    }
  }

  /** `redis://127.0.0.1:<port>` (`rediss://` with TLS; with the password when set). */
  get url(): string {
    const scheme = this.tls ? 'rediss' : 'redis';
    return this.password
      ? `${scheme}://:${this.password}@127.0.0.1:${this.port}`
      : `${scheme}://127.0.0.1:${this.port}`;
  }

  /**
   * Starts the server again on the same port (after `stop`/`kill`), and checks that what answers
   * there is this process, not another that holds the port.
   */
  async restart(): Promise<void> {
    this.process.start();
    await waitForPort(this.port);
    const client = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      ...(this.tls ? { tls: { ca: this.tls.ca } } : {}),
    });
    try {
      await client.connect();
      const pid = Number(/process_id:(\d+)/.exec(await client.info('server'))?.[1]);
      if (pid !== this.process.pid)
        throw new Error(`port ${this.port} is held by another process (pid ${pid}), not this redis-server`);
    } catch (err) {
      throw new Error(
        `redis-server on port ${this.port} did not start: ${(err as Error).message}\n${this.process.tail()}`,
      );
    } finally {
      client.disconnect();
    }
  }

  /** Kills the server abruptly (SIGKILL), as an outage would. */
  async kill(): Promise<void> {
    await this.process.stop('SIGKILL');
  }

  /** Stops the server and removes its folder. */
  async stop(): Promise<void> {
    await this.process.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
