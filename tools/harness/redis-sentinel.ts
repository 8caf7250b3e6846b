import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import type { SettingsInput } from '../../configs';
import { requireBinary, ManagedProcess } from './binary';
import { freePort, waitFor, waitForPort } from './ports';

/** Options of `RedisSentinelSetup.start`. */
export interface RedisSentinelOptions {
  /** Name the sentinels monitor the master under (`KVSTORE_SENTINEL_MASTER`). @default 'mymaster' */
  readonly masterName?: string;
  /** `requirepass`/`masterauth` of the data nodes (the sentinels take no password). @default undefined */
  readonly password?: string;
  /** Replicas of the master (two keep one to confirm writes after a failover). @default 1 */
  readonly replicas?: number;
}

/** One data node (master or replica) or sentinel: its port and its process. */
export interface SentinelSetupNode {
  readonly port: number;
  readonly process: ManagedProcess;
}

/**
 * One master, one replica (or `replicas`) and three sentinels (quorum 2), all on free loopback ports. Sentinels
 * run from Debian's `redis-sentinel` when it is installed, else as `redis-server <conf> --sentinel`
 * (the same binary: Debian's redis-sentinel is a link to it). Failover is tuned fast for tests
 * (`down-after-milliseconds` 1000, `failover-timeout` 5000).
 */
export class RedisSentinelSetup {
  private constructor(
    readonly masterName: string,
    /** [0] starts as the master, the others as its replicas; a failover promotes one of them. */
    readonly data: readonly SentinelSetupNode[],
    readonly sentinels: readonly SentinelSetupNode[],
    private readonly dir: string,
    readonly password?: string,
  ) {}

  /** Starts master, replica and sentinels and waits until every sentinel sees the replica. */
  static async start(opts: RedisSentinelOptions = {}): Promise<RedisSentinelSetup> {
    const masterName = opts.masterName ?? 'mymaster';
    const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
    const auth = opts.password ? ['--requirepass', opts.password, '--masterauth', opts.password] : [];
    const masterPort = await freePort();
    const base = (port: number) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      ...auth,
    ];
    const data: SentinelSetupNode[] = [
      { port: masterPort, process: new ManagedProcess(`redis-master-${masterPort}`, 'redis-server', base(masterPort)) },
    ];
    for (let r = 0; r < (opts.replicas ?? 1); r++) {
      const replicaPort = await freePort();
      data.push({
        port: replicaPort,
        process: new ManagedProcess(`redis-replica-${replicaPort}`, 'redis-server', [
          ...base(replicaPort),
          '--replicaof',
          '127.0.0.1',
          String(masterPort),
        ]),
      });
    }
    const useSentinelBinary = hasBinary('redis-sentinel');
    const sentinels: SentinelSetupNode[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${port}.conf`);
      // Sentinels rewrite their config file (the promoted master, known peers): one writable file each.
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${masterName} 1000`,
          `sentinel failover-timeout ${masterName} 5000`,
          `sentinel parallel-syncs ${masterName} 1`,
          ...(opts.password ? [`sentinel auth-pass ${masterName} ${opts.password}`] : []),
          '',
        ].join('\n'),
      );
      const proc = useSentinelBinary
        ? new ManagedProcess(`redis-sentinel-${port}`, 'redis-sentinel', [conf])
        : new ManagedProcess(`redis-sentinel-${port}`, 'redis-server', [conf, '--sentinel']);
      sentinels.push({ port, process: proc });
    }
    const setup = new RedisSentinelSetup(masterName, data, sentinels, dir, opts.password);
    try {
      // The replicas' first sync is not what the tests are about: the master sends it at once
      // instead of after `repl-diskless-sync-delay` (5 s), then gets Redis's default back. And the
      // sentinels start once the master sees every replica online: they learn the replicas from
      // its INFO, asked at connect and then every 10 s. The two waits took ~10 s of most setups.
      const [master, ...replicas] = data;
      master.process.start();
      await waitForPort(master.port);
      await setup.configSetDiskless(master.port, 0);
      for (const n of replicas) n.process.start();
      for (const n of replicas) await waitForPort(n.port);
      await waitFor(
        `the master on ${master.port} to see its ${replicas.length} replica(s) online`,
        async () =>
          ((await setup.onData(master.port, (c) => c.info('replication'))).match(/^slave\d+:.*state=online/gm) ?? [])
            .length >= replicas.length,
        { timeoutMs: 20_000, intervalMs: 50 },
      );
      await setup.configSetDiskless(master.port, 5);
      for (const s of sentinels) s.process.start();
      for (const s of sentinels) await waitForPort(s.port);
      await waitFor(
        'every sentinel to know the master and its replica',
        async () => {
          for (const s of sentinels) {
            const reply = (await setup.askSentinel(s.port, 'SENTINEL', 'REPLICAS', masterName)) as unknown[];
            if (!Array.isArray(reply) || reply.length < data.length - 1) return false;
            const sentinelsSeen = (await setup.askSentinel(s.port, 'SENTINEL', 'SENTINELS', masterName)) as unknown[];
            if (!Array.isArray(sentinelsSeen) || sentinelsSeen.length < 2) return false;
          }
          return true;
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
    } catch (err) {
      await setup.stop();
      throw err;
    }
    return setup;
  }

  /** `127.0.0.1:<port>` of every sentinel, for `KVSTORE_NODES`. */
  get sentinelAddresses(): string[] {
    return this.sentinels.map((s) => `127.0.0.1:${s.port}`);
  }

  /**
   * The service's kvstore settings for this setup: the first sentinel in the URL (with the data
   * nodes' password), the others as nodes, the master's name; and a 3 s connect timeout: each
   * reconnect asks a sentinel, then connects to the master it names, and on a loaded machine 1 s
   * (the default) for both timed out attempt after attempt (issue 26, make test on a shared VM).
   */
  kvstoreSettings(): NonNullable<SettingsInput['kvstore']> {
    const auth = this.password ? `:${this.password}@` : '';
    return {
      url: `redis://${auth}${this.sentinelAddresses[0]}`,
      topology: { mode: 'sentinel', nodes: this.sentinelAddresses.slice(1), sentinelMaster: this.masterName },
      connectTimeoutMs: 3000,
    };
  }

  /** The port the sentinels name as master now (SENTINEL GET-MASTER-ADDR-BY-NAME on the first running one). */
  async currentMasterPort(): Promise<number> {
    for (const s of this.sentinels) {
      if (!s.process.running) continue;
      const reply = (await this.askSentinel(s.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.masterName)) as
        string[] | null;
      if (reply) return Number(reply[1]);
    }
    throw new Error('no running sentinel names a master');
  }

  /** The data node that is master now. */
  async currentMaster(): Promise<SentinelSetupNode> {
    const port = await this.currentMasterPort();
    const node = this.data.find((n) => n.port === port);
    if (!node) throw new Error(`sentinels name 127.0.0.1:${port}, which is none of this setup's nodes`);
    return node;
  }

  /**
   * Kills the current master (SIGKILL) and waits until the sentinels name the other node and it
   * answers `role:master`. Resolves with the new master.
   */
  async failover(timeoutMs = 30_000): Promise<SentinelSetupNode> {
    const old = await this.currentMaster();
    await old.process.stop('SIGKILL');
    return waitFor(
      `the sentinels to promote the replica after killing 127.0.0.1:${old.port}`,
      async () => {
        const port = await this.currentMasterPort();
        if (port === old.port) return false;
        const node = this.data.find((n) => n.port === port);
        if (!node) return false;
        return /role:master/.test(await this.onData(node.port, (c) => c.info('replication'))) ? node : false;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  /**
   * Starts a killed data node again on its port as a replica of the master the sentinels name now,
   * as the start script of a Sentinel-managed pod does (Bitnami's redis chart asks the sentinels
   * before starting). Left to start as the master it was, it would wait for a sentinel to convert it:
   * 10 to 20 s (INFO every 10 s, and 8 s of reporting the wrong role first), which overran this wait
   * on a loaded machine. Resolves once it says `role:slave` and is in sync.
   */
  async restartAsReplica(node: SentinelSetupNode, timeoutMs = 30_000): Promise<void> {
    const master = await this.currentMasterPort();
    node.process.start(['--replicaof', '127.0.0.1', String(master)]);
    await waitForPort(node.port);
    await waitFor(
      `127.0.0.1:${node.port} to rejoin as a replica`,
      async () => {
        const info = await this.onData(node.port, (c) => c.info('replication'));
        return /role:slave/.test(info) && /master_link_status:up/.test(info);
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  /** A plain client of one data node. */
  private async configSetDiskless(port: number, seconds: number): Promise<void> {
    await this.onData(port, (c) => c.config('SET', 'repl-diskless-sync-delay', String(seconds)));
  }

  /** `fn` on a connection of its own to the data node on `port`, closed after. */
  private async onData<T>(port: number, fn: (c: Redis) => Promise<T>): Promise<T> {
    const c = this.dataClient(port);
    try {
      await c.connect();
      return await fn(c);
    } finally {
      c.disconnect();
    }
  }

  dataClient(port: number): Redis {
    return new Redis(port, '127.0.0.1', {
      password: this.password,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
  }

  /** A sentinel-aware client of the master (what the service builds in sentinel mode). */
  client(): Redis {
    const c = new Redis({
      sentinels: this.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
      name: this.masterName,
      password: this.password,
      lazyConnect: true,
    });
    // Sentinels are briefly unreachable while a test stops them: not an error of the test.
    c.on('error', () => undefined);
    return c;
  }

  private async askSentinel(port: number, ...args: string[]): Promise<unknown> {
    const c = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await c.connect();
      return await c.call(args[0], ...args.slice(1));
    } finally {
      c.disconnect();
    }
  }

  /** Stops every process and removes the folder. */
  async stop(): Promise<void> {
    for (const s of this.sentinels) await s.process.stop();
    for (const n of this.data) await n.process.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function hasBinary(name: string): boolean {
  try {
    requireBinary(name);
    return true;
  } catch {
    return false;
  }
}
