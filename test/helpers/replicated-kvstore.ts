import type { SettingsInput } from '../../configs';
import { waitFor } from '../../tools/harness/ports';
import { RedisCluster } from '../../tools/harness/redis-cluster';
import { RedisSentinelSetup } from '../../tools/harness/redis-sentinel';
import { buildTestApp, type TestApp } from './app';

/**
 * Two in-process service replicas (`buildTestApp`, rate limits off) on one real Redis topology
 * with a failover to inject: the setup the fault suites share (test/faults/acknowledged-writes
 * and acknowledged-deletes). Called inside a `describe`, it registers the `beforeAll` that starts
 * the topology and the apps and the `afterAll` that stops them; its methods are for the tests.
 */
export interface ReplicatedKvstore {
  /** The two replicas (after `beforeAll`). */
  apps(): readonly [TestApp, TestApp];
  /** The content item hash as Redis holds it, read through a fresh client. */
  storedItems(): Promise<Map<string, string>>;
  /**
   * The fault: the content master killed (-9) and a replica promoted, then, a second after the
   * switch, the old master back as a replica. `switchedAt` is when the new master was named.
   */
  failover(): Promise<{ readonly killedAt: number; readonly switchedAt: number }>;
}

/** Starting a topology of several redis-server processes and sentinels (a hang guard). */
const START_GUARD_MS = 60_000;
/** Redis's content item hash (its Cluster form has the hash tag that keeps the content in one slot). */
const ITEMS = 'svc-ai-search:content:items';
const CLUSTER_ITEMS = '{svc-ai-search:content}:items';

/** Registers the hooks that start `start()`'s topology and two replicas on `kvstore(topology)`. */
function replicated<T extends { stop(): Promise<void> }>(
  start: () => Promise<T>,
  kvstore: (topology: T) => NonNullable<SettingsInput['kvstore']>,
): { topology(): T; apps(): readonly [TestApp, TestApp] } {
  let topology: T | undefined;
  let apps: [TestApp, TestApp] | undefined;
  beforeAll(async () => {
    topology = await start();
    const input: SettingsInput = {
      service: { environment: 'testing' },
      kvstore: kvstore(topology),
      rateLimit: { enabled: false },
    };
    apps = [await buildTestApp(input), await buildTestApp(input)];
  }, START_GUARD_MS);
  afterAll(async () => {
    for (const app of apps ?? []) await app.close();
    await topology?.stop();
  });
  const started = <V>(v: V | undefined): V => {
    if (v === undefined) throw new Error('the replicated kvstore is used before its beforeAll ran');
    return v;
  };
  return { topology: () => started(topology), apps: () => started(apps) };
}

/** Two replicas on a Sentinel setup (one master, `replicas` replicas, three sentinels). */
export function replicasOnSentinel(replicas: number): ReplicatedKvstore & { setup(): RedisSentinelSetup } {
  const r = replicated(
    () => RedisSentinelSetup.start({ replicas }),
    (setup) => setup.kvstoreSettings(),
  );
  return {
    setup: r.topology,
    apps: r.apps,
    async storedItems() {
      const c = r.topology().client();
      try {
        await c.connect();
        return new Map(Object.entries(await c.hgetall(ITEMS)));
      } finally {
        c.disconnect();
      }
    },
    async failover() {
      const setup = r.topology();
      const old = await setup.currentMaster();
      const killedAt = Date.now();
      await setup.failover();
      const switchedAt = Date.now();
      await sleep(1000);
      // As the Bitnami chart's start script does: ask the sentinels, start as the new master's replica.
      await setup.restartAsReplica(old);
      return { killedAt, switchedAt };
    },
  };
}

/**
 * Two replicas on a Cluster of three masters with two replicas each, at durability `replica`
 * (the other replica follows the promoted one, so writes resume once the cluster converges).
 */
export function replicasOnCluster(): ReplicatedKvstore {
  const r = replicated(
    () => RedisCluster.start({ masters: 3, replicas: 2 }),
    (cluster) => ({
      url: cluster.url(0),
      topology: { mode: 'cluster', nodes: cluster.seeds.slice(1) },
      durability: 'replica',
    }),
  );
  return {
    apps: r.apps,
    async storedItems() {
      const c = r.topology().client();
      try {
        await c.connect();
        return new Map(Object.entries(await c.hgetall(CLUSTER_ITEMS)));
      } finally {
        c.disconnect();
      }
    },
    async failover() {
      const cluster = r.topology();
      const old = await cluster.masterOf(CLUSTER_ITEMS);
      const killedAt = Date.now();
      await cluster.kill(old);
      await waitFor(
        'a replica promoted',
        async () => (await cluster.masterOf(CLUSTER_ITEMS).catch(() => old)) !== old,
        {
          timeoutMs: 20_000,
          intervalMs: 100,
        },
      );
      const switchedAt = Date.now();
      await sleep(1000);
      await cluster.restart(old);
      return { killedAt, switchedAt };
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
