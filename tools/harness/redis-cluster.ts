import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { ManagedProcess, runTool } from './binary';
import { freePort, waitFor, waitForPort } from './ports';
import type { TlsCerts } from './tls-certs';

/** Options of `RedisCluster.start`. */
export interface RedisClusterOptions {
  /** Masters. @default 3 */
  readonly masters?: number;
  /**
   * Replicas per master (`--cluster-replicas`): with one, killing a master fails its slots over
   * to its replica (after `--cluster-node-timeout`, 2 s). @default 0 (a killed master's slots are
   * down until it restarts)
   */
  readonly replicas?: number;
  /** `requirepass` and `masterauth` of every node. @default undefined (no password) */
  readonly password?: string;
  /** When set, every node speaks TLS only, the cluster bus included (`--tls-cluster yes`). @default undefined */
  readonly tls?: TlsCerts;
}

/** One node of the cluster: its port, its process and its folder (nodes.conf lives there). */
export interface ClusterNode {
  readonly port: number;
  readonly process: ManagedProcess;
  readonly dir: string;
}

/**
 * A real Redis Cluster of `masters` nodes from Debian's `redis-server --cluster-enabled yes` on
 * free loopback ports, joined with `redis-cli --cluster create … --cluster-yes`. No persistence
 * of data (a killed master comes back empty, as an in-memory cache would), but each node keeps its
 * `nodes.conf`, so a restarted master rejoins with its slots.
 */
export class RedisCluster {
  private constructor(
    readonly nodes: readonly ClusterNode[],
    readonly password?: string,
    readonly tls?: TlsCerts,
  ) {}

  /** Starts the nodes, creates the cluster and waits until every node says `cluster_state:ok`. */
  static async start(opts: RedisClusterOptions = {}): Promise<RedisCluster> {
    const count = (opts.masters ?? 3) * (1 + (opts.replicas ?? 0));
    const nodes: ClusterNode[] = [];
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
      const t = opts.tls;
      const listen = t
        ? [
            '--port',
            '0',
            '--tls-port',
            String(port),
            '--tls-cluster',
            'yes',
            '--tls-cert-file',
            t.certFile,
            '--tls-key-file',
            t.keyFile,
            '--tls-ca-cert-file',
            t.caFile,
            '--tls-auth-clients',
            'no',
          ]
        : ['--port', String(port)];
      const args = [
        ...listen,
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '2000',
        // A master that is down must not stop the others answering for their own slots.
        '--cluster-require-full-coverage',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        // A replica's full sync starts at once, not after the default 5 s wait for more replicas.
        '--repl-diskless-sync-delay',
        '0',
      ];
      if (opts.password) args.push('--requirepass', opts.password, '--masterauth', opts.password);
      nodes.push({ port, dir, process: new ManagedProcess(`redis-cluster-${port}`, 'redis-server', args) });
    }
    const cluster = new RedisCluster(nodes, opts.password, opts.tls);
    try {
      for (const n of nodes) n.process.start();
      for (const n of nodes) await waitForPort(n.port);
      const auth = [
        ...(opts.password ? ['-a', opts.password, '--no-auth-warning'] : []),
        ...(opts.tls ? ['--tls', '--cacert', opts.tls.caFile] : []),
      ];
      const created = runTool('redis-cli', [
        ...auth,
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        String(opts.replicas ?? 0),
        '--cluster-yes',
      ]);
      if (created.status !== 0)
        throw new Error(`redis-cli --cluster create failed:\n${created.stdout}\n${created.stderr}`);
      await cluster.waitUntilOk();
      if (opts.replicas) await cluster.waitForReplicasInSync();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** `redis://127.0.0.1:<port>` (`rediss://` with TLS) of node `i` (the seed a service is configured with), password included when set. */
  url(i = 0): string {
    const port = this.nodes[i].port;
    const scheme = this.tls ? 'rediss' : 'redis';
    return this.password ? `${scheme}://:${this.password}@127.0.0.1:${port}` : `${scheme}://127.0.0.1:${port}`;
  }

  /** ioredis `tls` option trusting the throwaway CA, when the cluster speaks TLS. */
  private get tlsOptions(): { tls?: { ca: string } } {
    return this.tls ? { tls: { ca: this.tls.ca } } : {};
  }

  /** `127.0.0.1:<port>` of every node, for `KVSTORE_NODES`. */
  get seeds(): string[] {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`);
  }

  /** A plain (non-cluster) client of node `i`, for CLUSTER INFO and the like. */
  nodeClient(i: number): Redis {
    return new Redis(this.nodes[i].port, '127.0.0.1', {
      password: this.password,
      ...this.tlsOptions,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
  }

  /** A cluster client of the whole cluster (for tests that read or flush what the service wrote). */
  client(): InstanceType<typeof Redis.Cluster> {
    return new Redis.Cluster(
      this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
      { redisOptions: { password: this.password, ...this.tlsOptions }, lazyConnect: true },
    );
  }

  /** Waits until every running node answers `cluster_state:ok` to CLUSTER INFO. */
  async waitUntilOk(timeoutMs = 20_000): Promise<void> {
    for (let i = 0; i < this.nodes.length; i++) {
      if (!this.nodes[i].process.running) continue;
      await waitFor(
        `cluster_state:ok on 127.0.0.1:${this.nodes[i].port}`,
        async () => {
          const c = this.nodeClient(i);
          try {
            await c.connect();
            return /cluster_state:ok/.test(String(await c.call('CLUSTER', 'INFO')));
          } finally {
            c.disconnect();
          }
        },
        { timeoutMs, intervalMs: 200 },
      );
    }
  }

  /** Index of the node that is master of `key`'s slot now (CLUSTER SLOTS on a running node). */
  async masterOf(key: string): Promise<number> {
    for (let i = 0; i < this.nodes.length; i++) {
      if (!this.nodes[i].process.running) continue;
      const c = this.nodeClient(i);
      try {
        await c.connect();
        const slot = Number(await c.call('CLUSTER', 'KEYSLOT', key));
        const slots = (await c.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
        const port = slots.find(([lo, hi]) => slot >= lo && slot <= hi)?.[2][1];
        const index = this.nodes.findIndex((n) => n.port === port);
        if (index >= 0) return index;
      } finally {
        c.disconnect();
      }
    }
    throw new Error(`no running node names a master for ${key}`);
  }

  /** Waits until every replica node has finished its sync with its master (`master_link_status:up`). */
  async waitForReplicasInSync(timeoutMs = 30_000): Promise<void> {
    for (let i = 0; i < this.nodes.length; i++) {
      if (!this.nodes[i].process.running) continue;
      await waitFor(
        `127.0.0.1:${this.nodes[i].port} a master or a replica in sync`,
        async () => {
          const c = this.nodeClient(i);
          try {
            await c.connect();
            const info = await c.info('replication');
            return /role:master/.test(info) || /master_link_status:up/.test(info);
          } finally {
            c.disconnect();
          }
        },
        { timeoutMs, intervalMs: 200 },
      );
    }
  }

  /** Deletes every key on every master (between tests). */
  async flushAll(): Promise<void> {
    for (let i = 0; i < this.nodes.length; i++) {
      const c = this.nodeClient(i);
      try {
        await c.connect();
        await c.flushall();
      } finally {
        c.disconnect();
      }
    }
  }

  /** Kills master `i` abruptly (SIGKILL), as an outage would. */
  async kill(i: number): Promise<void> {
    await this.nodes[i].process.stop('SIGKILL');
  }

  /** Starts master `i` again on its port; it rejoins with its slots (from nodes.conf), empty. */
  async restart(i: number): Promise<void> {
    this.nodes[i].process.start();
    await waitForPort(this.nodes[i].port);
    await this.waitUntilOk();
  }

  /** Stops every node and removes their folders. */
  async stop(): Promise<void> {
    for (const n of this.nodes) {
      await n.process.stop();
      rmSync(n.dir, { recursive: true, force: true });
    }
  }
}
