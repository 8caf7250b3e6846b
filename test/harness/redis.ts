import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManagedProcess } from './binary';
import { freePort, waitForPort } from './ports';

/** A real `redis-server` on a free loopback port, with no persistence, for one test file. */
export class RedisServer {
  readonly process: ManagedProcess;
  private readonly dir: string;

  private constructor(
    readonly port: number,
    readonly password?: string,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir];
    if (password) args.push('--requirepass', password);
    this.process = new ManagedProcess('redis-server', 'redis-server', args);
  }

  /** Starts a server (on `port`, else a free one) and waits until it accepts connections. */
  static async start(opts: { password?: string; port?: number } = {}): Promise<RedisServer> {
    const server = new RedisServer(opts.port ?? (await freePort()), opts.password);
    await server.restart();
    return server;
  }

  /** `redis://127.0.0.1:<port>` (with the password when set). */
  get url(): string {
    return this.password ? `redis://:${this.password}@127.0.0.1:${this.port}` : `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server again on the same port (after `stop`/`kill`). */
  async restart(): Promise<void> {
    this.process.start();
    await waitForPort(this.port);
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
