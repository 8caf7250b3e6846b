import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import type { SettingsInput } from '../../configs';
import { buildTestApp, type TestApp } from '../helpers/app';
import { waitFor, waitForPort } from '../../tools/harness/ports';
import { RedisServer } from '../../tools/harness/redis';
import { ServiceProcess } from '../../tools/harness/service-process';
import { replicasOnCluster, replicasOnSentinel } from '../helpers/replicated-kvstore';
import { sleep, type ReplicaClient } from './fault-run';
import { expectPromiseHeld, hkeys, inProcess, item, measure, upToUnconfirmed, zero } from './measure';

/**
 * Issue 26's proof: writers (one sequential client and six concurrent ones, unique ids, spread
 * over two service replicas) run while one fault hits real redis-server / redis-sentinel /
 * cluster processes or a service replica; then every acknowledged id is read through every
 * replica and straight from Redis. Each fault records acknowledged, acknowledged-but-not-served
 * (must be 0), acknowledged-but-lost (must be 0), time to the first good write, the 503 messages
 * and store_losses against the truth; with FAULT_REPORT=<file> the records are written there
 * (the table in docs/failure-behaviour.md comes from such a run).
 */

// Jest's limit for each fault of this file: a hang guard, never the bound (each fault's writers
// run for a set number of writes, and the assertions count items). A kill -9 and restart of a
// service replica took 31 s alone at load 8-13 and ran past a 60 s limit in a full run at load 10-14.
jest.setTimeout(180_000);

function child(name: string, svc: ServiceProcess): ReplicaClient {
  return {
    name,
    async ingest(id) {
      const r = await svc.request('/api/ingest', { method: 'POST', body: item(id) });
      return { status: r.status, message: r.status === 201 ? undefined : r.json<{ message?: string }>().message };
    },
    async read(id) {
      return (await svc.request(`/api/v1/articles/${id}`)).status;
    },
    async storeLossItems() {
      return (await svc.request('/health')).json<{ content: { store_losses: { items: number } } }>().content
        .store_losses.items;
    },
  };
}

describe('acknowledged means served: standalone Redis faults (two in-process replicas)', () => {
  let redis: RedisServer;
  let a: TestApp;
  let b: TestApp;
  let replicas: ReplicaClient[];
  beforeAll(async () => {
    redis = await RedisServer.start();
    const input: SettingsInput = {
      service: { environment: 'testing' },
      kvstore: { url: redis.url },
      rateLimit: { enabled: false },
    };
    a = await buildTestApp(input);
    b = await buildTestApp(input);
    replicas = [inProcess('a', a), inProcess('b', b)];
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it('CLIENT KILL of every client connection', async () => {
    const r = await measure({
      fault: 'CLIENT KILL TYPE normal (every service connection)',
      durability: 'primary',
      replicas,
      prefix: 'ck',
      inject: async () => {
        const admin = new Redis(redis.url);
        try {
          await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
        } finally {
          admin.disconnect();
        }
        return { from: Date.now(), fromWhat: 'the kill' };
      },
      stored: () => hkeys(redis.url),
      truth: zero,
    });
    expectPromiseHeld(r);
  });

  it('kill -9 of Redis without persistence: it restarts empty, the replicas write back what they acknowledged', async () => {
    let killAt = 0;
    let restartAt = 0;
    const r = await measure({
      fault: 'kill -9 Redis, restarted empty (no persistence)',
      durability: 'primary',
      replicas,
      prefix: 'np',
      inject: async () => {
        killAt = Date.now();
        await redis.kill();
        await sleep(300);
        restartAt = Date.now();
        await redis.restart();
        return { from: restartAt, fromWhat: 'the restart' };
      },
      stored: () => hkeys(redis.url),
      // Redis lost every item it held before the kill, and nothing written after the restart.
      // Answered 201 before the kill: held, so lost. Sent before the restart and answered after
      // the kill (in flight at the kill): it ran either on the old server (lost) or, having waited
      // for the write connection to reconnect (up to 2 s), on the new one (kept); from outside
      // only a range is known. A write whose reply the kill cut off (503 "may or may not") may
      // have been stored and lost too: it is counted if its notice reached a replica first.
      truth: (w, storedBefore) => {
        const lost = storedBefore + w.acks.filter((x) => x.doneAt < killAt).length;
        const inFlight = w.acks.filter((x) => x.doneAt >= killAt && x.sentAt < restartAt).length;
        const unknown = w.refusals.filter((x) => x.sentAt < restartAt && /may or may not/.test(x.message)).length;
        const more = inFlight + unknown;
        return {
          ok: (n) => n >= lost && n <= lost + more,
          text: more ? `${lost} (+ up to ${more} in flight at the kill)` : String(lost),
        };
      },
    });
    expectPromiseHeld(r);
  });

  it('kill -9 of Redis with persistence (appendonly, fsync always): nothing lost, nothing counted', async () => {
    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'appendfsync', 'always');
      await admin.config('SET', 'appendonly', 'yes');
      await waitFor(
        'the append-only file rewritten',
        async () =>
          /aof_enabled:1[\s\S]*aof_rewrite_in_progress:0/.test(await admin.info('persistence')) &&
          !/aof_rewrite_scheduled:1/.test(await admin.info('persistence')),
      );
    } finally {
      admin.disconnect();
    }
    const r = await measure({
      fault: 'kill -9 Redis, restarted from its AOF (appendfsync always)',
      durability: 'primary',
      replicas,
      prefix: 'p',
      inject: async () => {
        await redis.kill();
        await sleep(300);
        const restartAt = Date.now();
        redis.process.start(['--appendonly', 'yes', '--appendfsync', 'always']);
        await waitForPort(redis.port);
        return { from: restartAt, fromWhat: 'the restart' };
      },
      stored: () => hkeys(redis.url),
      truth: zero,
    });
    expectPromiseHeld(r);
  });
});

describe('acknowledged means served: a service replica killed with kill -9 (two service processes)', () => {
  let redis: RedisServer;
  let dirs: string[];
  let svcs: ServiceProcess[];
  beforeAll(async () => {
    redis = await RedisServer.start();
    dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'fault-svc-')));
    const env = (dir: string) => ({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ENVIRONMENT: 'testing',
      LOG_LEVEL: 'warn',
      DATA_DIR: dir,
      DEMO_CONTENT: 'false',
      KVSTORE_URL: redis.url,
      KVSTORE_COMMAND_TIMEOUT_MS: '2000',
      RATELIMIT_ENABLED: 'false',
    });
    svcs = await Promise.all(dirs.map((d) => ServiceProcess.start({ env: env(d) })));
  });
  afterAll(async () => {
    for (const s of svcs ?? []) await s.stop().catch(() => undefined);
    await redis?.stop();
    for (const d of dirs ?? []) rmSync(d, { recursive: true, force: true });
  });

  it('kill -9 of one replica, restarted: every acknowledged item is served by both', async () => {
    const replicas = [child('svc-0', svcs[0]), child('svc-1', svcs[1])];
    const r = await measure({
      fault: 'kill -9 of one service replica, restarted',
      durability: 'primary',
      replicas,
      prefix: 'sk',
      inject: async () => {
        await svcs[0].process.stop('SIGKILL');
        const from = Date.now();
        await svcs[0].restart();
        return { from, fromWhat: 'the kill' };
      },
      stored: () => hkeys(redis.url),
      truth: zero,
    });
    expectPromiseHeld(r);
  });
});

describe.each([1, 2])(
  'acknowledged means served: Sentinel master killed (%i replica(s), three sentinels)',
  (replicaCount) => {
    const sentinel = replicasOnSentinel(replicaCount);

    it('master kill -9, the old master restarted as a replica a second after the switch', async () => {
      const [a, b] = sentinel.apps();
      const r = await measure({
        fault: `Sentinel (${replicaCount} replica${replicaCount > 1 ? 's' : ''}): master kill -9, old master back as a replica 1 s after the switch`,
        durability: 'replica (sentinel default)',
        replicas: [inProcess('a', a), inProcess('b', b)],
        prefix: `sn${replicaCount}`,
        inject: async () => {
          const { switchedAt } = await sentinel.failover();
          // With one replica, the promoted master has none until the old one is in sync; with two,
          // the other replica follows the new master at the switch.
          return {
            from: switchedAt,
            fromWhat: 'the new master named',
            levelMetAt: replicaCount > 1 ? switchedAt : Date.now(),
          };
        },
        stored: async () => new Set((await sentinel.storedItems()).keys()),
        truth: upToUnconfirmed,
      });
      expectPromiseHeld(r);
      // Writes resume once the level can be met: a generous bound for a loaded machine (measured
      // figures in docs/failure-behaviour.md).
      expect(r.firstGoodWriteAfterLevelMetMs).toBeLessThan(5000);
    });
  },
);

/**
 * At two replicas per master (what docs/failure-behaviour.md advises for `replica`; the charts
 * deploy no Cluster or Sentinel of their own): the other replica follows the promoted one, so
 * writes at `replica` resume once the cluster converges, without waiting for the old master.
 */
describe('acknowledged means served: Cluster master killed (three masters with two replicas each)', () => {
  const cluster = replicasOnCluster();

  it("the content slot's master kill -9, a replica promoted, the other follows it, the old master back a second later", async () => {
    const [a, b] = cluster.apps();
    const r = await measure({
      fault:
        "Cluster, 2 replicas per master: content slot's master kill -9, replica promoted, old master back 1 s later",
      durability: 'replica',
      replicas: [inProcess('a', a), inProcess('b', b)],
      prefix: 'cl',
      inject: async () => {
        const { killedAt, switchedAt } = await cluster.failover();
        // The level can be met from the promotion on: the other replica follows the new master.
        return {
          from: switchedAt,
          fromWhat: `the replica promoted (${switchedAt - killedAt} ms after the kill)`,
          levelMetAt: switchedAt,
        };
      },
      stored: async () => new Set((await cluster.storedItems()).keys()),
      truth: zero,
    });
    expectPromiseHeld(r);
    // Writes resume within the failover itself, not after the old master's rejoin (generous bound).
    expect(r.firstGoodWriteMs).toBeLessThan(5000);
  });
});
