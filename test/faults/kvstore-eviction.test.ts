import Redis from 'ioredis';
import { METRICS, PATHS } from '../../contract';
import { ManagedProcess } from '../../tools/harness/binary';
import { freePort, waitFor } from '../../tools/harness/ports';
import { RedisServer } from '../../tools/harness/redis';
import { REPO_ROOT, ServiceProcess, TS_LOADER_ARGS } from '../../tools/harness/service-process';
import { ITEMS } from './measure';

/**
 * Issue 37, row 2: a Redis whose `maxmemory-policy` may evict the content keys. The real service
 * process against real redis-servers with `maxmemory 20mb`: refused at start (`allkeys-lru`),
 * started with `KVSTORE_ACCEPT_EVICTION=true` and saying so, clean with `noeviction` and
 * `volatile-lru`, told apart when CONFIG is refused (INFO memory answers) or both are (unknown),
 * a policy changed while running, and evictions while running reported and written back exactly.
 */

interface Eviction {
  policy: string | null;
  maxmemory_bytes: number | null;
  policy_risk: string;
  evicted_keys: number;
  last_eviction_at: string | null;
}

interface Health {
  status: string;
  kvstore: string;
  kvstore_eviction?: Eviction;
  rate_limit_store_eviction?: Eviction;
  content: { items: number; store_losses: { events: number; items: number } };
}

const MEMORY = ['--maxmemory', '20mb'];

function env(url: string, more: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ENVIRONMENT: 'testing',
    LOG_LEVEL: 'info',
    DEMO_CONTENT: 'false',
    KVSTORE_URL: url,
    KVSTORE_COMMAND_TIMEOUT_MS: '2000',
    RATELIMIT_ENABLED: 'false',
    ...more,
  };
}

/**
 * Runs the service until it exits and returns its exit status and whole output; for a start that
 * must be refused. The 60 s guard only ends a start that hangs (a refused start exits in a few seconds).
 */
async function runUntilExit(e: Record<string, string | undefined>): Promise<{ status: string; output: string }> {
  const childEnv = { ...e, PORT: String(await freePort()) };
  const proc = new ManagedProcess('service', 'node', [...TS_LOADER_ARGS, 'service/main.ts'], REPO_ROOT, childEnv);
  proc.start();
  try {
    // `exited` waits for the pipes' end too: at the exit itself the fatal line may still be in one.
    return { status: await proc.exited(60_000), output: proc.logs() };
  } finally {
    await proc.stop('SIGKILL');
  }
}

async function health(svc: ServiceProcess): Promise<Health> {
  return (await svc.request('/health')).json<Health>();
}

/** Starts a redis-server with `args`, runs `body`, stops it. */
async function withRedis<T>(args: readonly string[], body: (redis: RedisServer) => Promise<T>): Promise<T> {
  const redis = await RedisServer.start({ args });
  try {
    return await body(redis);
  } finally {
    await redis.stop();
  }
}

/** Starts the service, runs `body`, stops it. */
async function withService<T>(
  e: Record<string, string | undefined>,
  body: (svc: ServiceProcess) => Promise<T>,
): Promise<T> {
  const svc = await ServiceProcess.start({ env: e });
  try {
    return await body(svc);
  } finally {
    await svc.stop();
  }
}

const article = (id: string, bytes: number) => ({
  id,
  type: 'article',
  title: `Note ${id}`,
  body: `${id} `.repeat(Math.ceil(bytes / (id.length + 1))),
});

describe('a kvstore maxmemory-policy that may evict content (real redis-server and service process)', () => {
  it('allkeys-lru refuses the start, naming the setting, its value and the fixes', async () => {
    await withRedis([...MEMORY, '--maxmemory-policy', 'allkeys-lru'], async (redis) => {
      const { status, output } = await runUntilExit(env(redis.url));
      expect(status).toBe('exit 1');
      const fatal = output.split('\n').find((l) => l.startsWith('fatal:')) ?? output;
      expect(fatal).toContain(
        "the kvstore's maxmemory-policy is allkeys-lru (maxmemory 20mb, read from the server by CONFIG GET)",
      );
      expect(fatal).toContain('maxmemory-policy noeviction');
      expect(fatal).toContain('volatile-*');
      expect(fatal).toContain('KVSTORE_ACCEPT_EVICTION=true');
    });
  }, 120_000);

  it('with KVSTORE_ACCEPT_EVICTION=true it starts, and /health and the log say the risk is accepted', async () => {
    await withRedis([...MEMORY, '--maxmemory-policy', 'allkeys-lru'], (redis) =>
      withService(env(redis.url, { KVSTORE_ACCEPT_EVICTION: 'true' }), async (svc) => {
        const h = await health(svc);
        expect(h.status).toBe('ok');
        expect(h.kvstore_eviction).toEqual({
          policy: 'allkeys-lru',
          maxmemory_bytes: 20 * 1024 * 1024,
          policy_risk: 'accepted',
          evicted_keys: 0,
          last_eviction_at: null,
        });
        await svc.logged('starting anyway because KVSTORE_ACCEPT_EVICTION=true');
      }),
    );
  }, 120_000);

  it.each(['noeviction', 'volatile-lru'])(
    '%s starts clean',
    async (policy) => {
      await withRedis([...MEMORY, '--maxmemory-policy', policy], (redis) =>
        withService(env(redis.url), async (svc) => {
          const h = await health(svc);
          expect(h.status).toBe('ok');
          expect(h.kvstore_eviction).toMatchObject({ policy, policy_risk: 'none', evicted_keys: 0 });
          expect((await svc.request('/api/ingest', { method: 'POST', body: article('clean', 100) })).status).toBe(201);
          // The content keys carry no TTL: a volatile-* policy never evicts them.
          const c = new Redis(redis.url);
          try {
            for (const key of [ITEMS, 'svc-ai-search:content:changes', 'svc-ai-search:content:epoch'])
              expect(await c.pttl(key)).toBe(-1);
          } finally {
            c.disconnect();
          }
        }),
      );
    },
    120_000,
  );

  it('CONFIG renamed away: the policy is read from INFO memory, so allkeys-lru is still refused and noeviction starts', async () => {
    const noConfig = ['--rename-command', 'CONFIG', ''];
    await withRedis([...MEMORY, '--maxmemory-policy', 'allkeys-lru', ...noConfig], async (redis) => {
      const { status, output } = await runUntilExit(env(redis.url));
      expect(status).toBe('exit 1');
      expect(output).toContain('maxmemory-policy is allkeys-lru (maxmemory 20mb, read from the server by INFO memory)');
    });
    await withRedis([...MEMORY, '--maxmemory-policy', 'noeviction', ...noConfig], (redis) =>
      withService(env(redis.url), async (svc) => {
        expect((await health(svc)).kvstore_eviction).toMatchObject({ policy: 'noeviction', policy_risk: 'none' });
      }),
    );
  }, 120_000);

  it('CONFIG and INFO both refused (an ACL without them): it starts, and /health and the log say the policy is unknown', async () => {
    const user = ['--user', 'svc', 'on', '>pw', '~*', '&*', '+@all', '-config', '-info'];
    await withRedis([...MEMORY, '--maxmemory-policy', 'allkeys-lru', ...user], (redis) =>
      withService(env(`redis://svc:pw@127.0.0.1:${redis.port}`), async (svc) => {
        const h = await health(svc);
        expect(h.kvstore).toBe('connected');
        expect(h.status).toBe('ok');
        expect(h.kvstore_eviction).toEqual({
          policy: null,
          maxmemory_bytes: null,
          policy_risk: 'unknown',
          evicted_keys: 0,
          last_eviction_at: null,
        });
        const line = await svc.logged('maxmemory-policy could not be read');
        expect(line).toContain('NOPERM');
        expect((await svc.request('/api/ingest', { method: 'POST', body: article('unknown', 100) })).status).toBe(201);
      }),
    );
  }, 120_000);

  it('a policy changed to allkeys-lru while running: health degraded and content writes refused with 503 naming it, until it is changed back', async () => {
    // Polled every 200 ms (KVSTORE_EVICTION_CHECK_MS; 5 s by default) so the two waits are short.
    await withRedis([...MEMORY, '--maxmemory-policy', 'noeviction'], (redis) =>
      withService(env(redis.url, { KVSTORE_EVICTION_CHECK_MS: '200' }), async (svc) => {
        const admin = new Redis(redis.url);
        try {
          expect((await svc.request('/api/ingest', { method: 'POST', body: article('before', 100) })).status).toBe(201);
          await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
          // Seen at the next poll; the bound only ends a wait that would never end.
          await waitFor(
            'policy_risk evicts',
            async () => (await health(svc)).kvstore_eviction?.policy_risk === 'evicts',
            { timeoutMs: 30_000, intervalMs: 200 },
          );
          expect((await health(svc)).status).toBe('degraded');
          const refused = await svc.request('/api/ingest', { method: 'POST', body: article('during', 100) });
          expect(refused.status).toBe(503);
          expect(refused.json<{ message: string }>().message).toContain('maxmemory-policy is allkeys-lru');
          expect(await admin.hexists(ITEMS, 'during')).toBe(0);
          await admin.config('SET', 'maxmemory-policy', 'noeviction');
          await waitFor('policy_risk none', async () => (await health(svc)).kvstore_eviction?.policy_risk === 'none', {
            timeoutMs: 30_000,
            intervalMs: 200,
          });
          expect((await health(svc)).status).toBe('ok');
          expect((await svc.request('/api/ingest', { method: 'POST', body: article('after', 100) })).status).toBe(201);
        } finally {
          admin.disconnect();
        }
      }),
    );
  }, 120_000);

  it("the rate limiter's own store with allkeys-lru: a warning, not a refusal; health stays ok", async () => {
    await withRedis([...MEMORY, '--maxmemory-policy', 'noeviction'], (content) =>
      withRedis([...MEMORY, '--maxmemory-policy', 'allkeys-lru'], (limits) =>
        withService(env(content.url, { RATELIMIT_ENABLED: 'true', RATELIMIT_STORAGE_URL: limits.url }), async (svc) => {
          const h = await health(svc);
          expect(h.status).toBe('ok');
          expect(h.kvstore_eviction).toMatchObject({ policy: 'noeviction', policy_risk: 'none' });
          expect(h.rate_limit_store_eviction).toMatchObject({ policy: 'allkeys-lru', policy_risk: 'evicts' });
          await svc.logged("the rate limiter's kvstore maxmemory-policy may evict keys without a TTL");
        }),
      ),
    );
  }, 120_000);
});

describe('evictions while running (allkeys-lru accepted, maxmemory 20mb)', () => {
  it('degrade health, raise the metric, and every acknowledged item lost is counted in store_losses and written back', async () => {
    await withRedis([...MEMORY, '--maxmemory-policy', 'allkeys-lru', '--maxmemory-samples', '64'], async (redis) => {
      const admin = new Redis(redis.url);
      let svc = await ServiceProcess.start({ env: env(redis.url, { KVSTORE_ACCEPT_EVICTION: 'true' }) });
      try {
        // 200 items of ~10 KB (2 MB), acknowledged.
        const ids = Array.from({ length: 200 }, (_, i) => `evict-${i}`);
        for (let i = 0; i < ids.length; i += 50) {
          const r = await svc.request('/api/ingest-batch', {
            method: 'POST',
            body: { items: ids.slice(i, i + 50).map((id) => article(id, 10_000)) },
          });
          expect(r.status).toBe(201);
        }
        expect(await admin.hlen(ITEMS)).toBe(200);
        // Another user of the same Redis fills it (a cache beside the content, as an allkeys-*
        // policy invites) until Redis evicts the item hash. With every key sampled
        // (maxmemory-samples 64) LRU is exact: the least recently used key goes first. The
        // service reads the epoch marker and the change stream every 5 s and never the item hash
        // (nothing is written), so the hash, given an hour's idle time (RESTORE IDLETIME of its
        // own DUMP, in one script: the same key and contents, as if untouched for an hour, where
        // waiting 10 s did the same for Redis's one-second LRU clock), is the oldest key and goes
        // alone: the epoch check cannot see this loss, only the eviction watch can.
        expect(
          await admin.eval(
            "redis.call('RESTORE', KEYS[1], 0, redis.call('DUMP', KEYS[1]), 'REPLACE', 'IDLETIME', 3600) return redis.call('OBJECT', 'IDLETIME', KEYS[1])",
            1,
            ITEMS,
          ),
        ).toBeGreaterThanOrEqual(3600);
        // EXISTS below leaves a key's idle time as it is (HLEN would reset it).
        const filler = Buffer.alloc(512 * 1024, 'x');
        let n = 0;
        while ((await admin.exists(ITEMS)) === 1) {
          if (n >= 400)
            throw new Error(
              `the item hash was not evicted after ${n} filler keys of 512 KB: ${await admin.info('stats')}`,
            );
          await admin.set(`filler:${n++}`, filler);
        }
        // What Redis lost of what the service acknowledged (nothing writes items meanwhile).
        const lost = 200 - (await admin.hlen(ITEMS));
        expect(lost).toBe(200);
        expect(await admin.exists('svc-ai-search:content:epoch', 'svc-ai-search:content:changes')).toBe(2);
        // The filler goes away, so the write-back fits and nothing is evicted twice.
        for (let i = 0; i < n; i++) await admin.del(`filler:${i}`);
        const evicted = Number(/evicted_keys:(\d+)/.exec(await admin.info('stats'))![1]);
        expect(evicted).toBeGreaterThan(0);

        // Seen at the next poll (every 5 s), reloaded at the reader's next turn (every 5 s); the
        // bounds only end a wait that would never end.
        await waitFor(
          'the eviction seen and the items written back',
          async () => {
            const h = await health(svc);
            return (
              h.kvstore_eviction!.evicted_keys === evicted &&
              h.content.store_losses.items > 0 &&
              (await admin.hlen(ITEMS)) === 200
            );
          },
          { timeoutMs: 60_000, intervalMs: 250 },
        );
        const h = await health(svc);
        expect(h.status).toBe('degraded');
        expect(h.kvstore_eviction).toMatchObject({
          policy: 'allkeys-lru',
          policy_risk: 'accepted',
          evicted_keys: evicted,
        });
        expect(h.kvstore_eviction!.last_eviction_at).not.toBeNull();
        // Exactly the items lost, each written back once.
        expect(h.content.store_losses).toEqual({ events: 1, items: lost });
        const metrics = (await svc.request(PATHS.metrics)).text;
        expect(metrics).toContain(`${METRICS.kvstoreEvictedKeysTotal}{store="kvstore"} ${evicted}`);
        await svc.logged('the kvstore evicted keys (maxmemory reached)');

        // Nothing acknowledged is lost: a restarted service (only Redis holds the content) serves all.
        await svc.stop();
        svc = await ServiceProcess.start({ env: env(redis.url, { KVSTORE_ACCEPT_EVICTION: 'true' }) });
        expect((await health(svc)).content.items).toBe(200);
        for (const id of ids) expect([id, (await svc.request(`/api/v1/articles/${id}`)).status]).toEqual([id, 200]);
      } finally {
        admin.disconnect();
        await svc.stop();
      }
    });
  }, 240_000);
});
