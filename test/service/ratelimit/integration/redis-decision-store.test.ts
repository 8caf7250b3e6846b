import fc from 'fast-check';
import type { TierLimits } from '../../../../configs';
import { ManualClock } from '../../../helpers/manual-clock';
import { clientId } from '../../../../service/ratelimit/client-key';
import { decideSource, probeScript } from '../../../../service/ratelimit/lua/script';
import { MemoryDecisionStore } from '../../../../service/ratelimit/memory-decision-store';
import { MAX_BATCH, RedisDecisionStore } from '../../../../service/ratelimit/redis-decision-store';
import { clientCommandsDuring } from '../../../../tools/harness/redis-monitor';
import { redisServerForSuite } from '../../../helpers/redis-server';
import { planFor, WIDE } from '../helpers';
import { CLIENTS, stepsArb, tierArb } from '../reference-model';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

describe('RedisDecisionStore against a real redis-server', () => {
  const redis = redisServerForSuite();
  beforeEach(async () => {
    await redis.client.flushall();
  });

  /** How much sameAsMemory stretches time: its shortest key expiry becomes 25 s. */
  const STRETCH = 1000;

  /** Time passes, or a group of clients' requests is sent at once (one batch). */
  type Round = { readonly wait: number } | { readonly group: readonly number[] };

  /**
   * Plays `rounds` against the script and the memory store on one clock; every decision must match.
   *
   * Windows and waits are stretched a thousandfold (GCRA decides the same when both scale): the
   * script's keys expire in real time (PX), not on the test clock, and with a 25 ms bucket a slow
   * machine would see a key vanish between two steps that the frozen clock says are simultaneous.
   */
  async function sameAsMemory(
    limits: readonly [TierLimits, TierLimits, TierLimits],
    rounds: readonly Round[],
  ): Promise<void> {
    await redis.client.flushall();
    const [global, ip, search] = limits.map((t) => ({ ...t, windowSeconds: t.windowSeconds * STRETCH }));
    const plan = planFor({ global, ip, search }, 'search');
    const clock = new ManualClock();
    const inRedis = new RedisDecisionStore(redis.client, clock);
    const memory = new MemoryDecisionStore(clock, 1000);
    for (const round of rounds) {
      if ('wait' in round) {
        clock.advance(round.wait * STRETCH);
        continue;
      }
      const keys = round.group.map((c) => plan.keys(clientId(CLIENTS[c], 64)));
      const got = await Promise.all(keys.map((k) => inRedis.decide(plan, k)));
      expect(got).toEqual(keys.map((k) => memory.decideAtOnce(plan, k)));
    }
  }

  it(
    'the Lua script decides exactly as the memory store, step by step (same clock)',
    async () => {
      await fc.assert(
        fc.asyncProperty(tierArb, tierArb, tierArb, stepsArb(40), (global, ip, search, steps) =>
          sameAsMemory(
            [global, ip, search],
            steps.map((step) => ('wait' in step ? step : { group: [step.client] })),
          ),
        ),
        { numRuns: 40 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it(
    'a turn of concurrent requests is one batch, decided exactly as the memory store decides them in order',
    async () => {
      const roundsArb = fc.array(
        fc.oneof(
          { weight: 1, arbitrary: fc.integer({ min: 0, max: 20000 }).map((wait): Round => ({ wait })) },
          {
            weight: 3,
            arbitrary: fc
              .array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 8 })
              .map((group): Round => ({ group })),
          },
        ),
        { minLength: 1, maxLength: 15 },
      );
      await fc.assert(
        fc.asyncProperty(tierArb, tierArb, tierArb, roundsArb, (global, ip, search, rounds) =>
          sameAsMemory([global, ip, search], rounds),
        ),
        { numRuns: 40 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('one EVALSHA per turn and plan however many requests; one alone still has its own', async () => {
    const store = new RedisDecisionStore(redis.client);
    // A global tier that drains slowly: its key must still be there to be read at the end (a WIDE
    // one drains in a millisecond and its key expires with it).
    const global: TierLimits = { limit: 1000, windowSeconds: 3600, burst: 1000 };
    const base = planFor({ global, ip: WIDE });
    const search = planFor({ global, ip: WIDE, search: WIDE }, 'search');
    await Promise.all([store.decide(base, base.keys('192.0.2.1')), store.decide(search, search.keys('192.0.2.1'))]);
    const seen = await clientCommandsDuring(redis.server.url, async () => {
      const all = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          i % 2 ? store.decide(base, base.keys(`192.0.2.${i}`)) : store.decide(search, search.keys(`192.0.2.${i}`)),
        ),
      );
      expect(all.every((d) => d.allowed)).toBe(true);
      await store.decide(base, base.keys('192.0.2.1'));
    });
    expect(seen).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA']);
    // 60 requests went through the global key: its debt is theirs plus the three before and after,
    // 3.6 s each, less what drained meanwhile (one request's worth per 3.6 s: allow three).
    const [t, debt] = (await redis.client.get('ratelimit:global'))!.split(' ').map(Number);
    expect(t).toBeGreaterThan(0);
    expect(debt).toBeLessThanOrEqual(63 * 3600000);
    expect(debt).toBeGreaterThan(60 * 3600000);
  });

  it('a batch holds at most maxBatch requests: the rest go in further calls of the same turn', async () => {
    const store = new RedisDecisionStore(redis.client, undefined, 4);
    const plan = planFor({ global: WIDE, ip: WIDE });
    await store.decide(plan, plan.keys('192.0.2.1'));
    const seen = await clientCommandsDuring(redis.server.url, async () => {
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.decide(plan, plan.keys(`192.0.2.${i}`))));
    });
    expect(seen).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA']);
  });

  it('full batches of distinct clients (513 keys in one call) are decided and charged exactly', async () => {
    const store = new RedisDecisionStore(redis.client);
    // global: 1000 at once, refilling one per 3.6 s, so what drains while the test runs stays small.
    const plan = planFor(
      {
        global: { limit: 1000, windowSeconds: 3600, burst: 1000 },
        ip: WIDE,
        search: { limit: 1, windowSeconds: 3600, burst: 5 },
      },
      'search',
    );
    await store.decide(plan, plan.keys('198.51.100.255'));
    const clients = Array.from({ length: 600 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
    const seen = await clientCommandsDuring(redis.server.url, async () => {
      const got = await Promise.all(clients.map((c) => store.decide(plan, plan.keys(c))));
      // The global bucket holds 1000; 601 requests in all, so every one fits.
      expect(got.every((d) => d.allowed)).toBe(true);
      expect(new Set(got.slice(0, MAX_BATCH).map((d) => d.now)).size).toBe(1);
    });
    expect(seen).toEqual(['EVALSHA', 'EVALSHA', 'EVALSHA']);
    // Each request charged once on the shared key: 601 × 3.6 s, less what drained meanwhile (allow three).
    const debt = Number((await redis.client.get('ratelimit:global'))!.split(' ')[1]);
    expect(debt).toBeLessThanOrEqual(601 * 3600000);
    expect(debt).toBeGreaterThan(598 * 3600000);
    expect(await redis.client.get(`ratelimit:search:${clients[599]}`)).toMatch(/^\d+ 3600000$/);
  });

  it('inside a batch a refused request consumes nothing, and a later one that fits is still admitted', async () => {
    // ip: 3 at once. Five requests of one client, interleaved with another's, all in one batch.
    // Slow refills (keys live for minutes): the keys are read back in real time.
    const plan = planFor({
      global: { limit: 1000, windowSeconds: 3600, burst: 100 },
      ip: { limit: 60, windowSeconds: 3600, burst: 3 },
    });
    const clock = new ManualClock();
    const store = new RedisDecisionStore(redis.client, clock);
    const order = ['a', 'a', 'b', 'a', 'a', 'a', 'b'];
    const got = await Promise.all(order.map((c) => store.decide(plan, plan.keys(`192.0.2.${c === 'a' ? 1 : 2}`))));
    expect(got.map((d) => d.allowed)).toEqual([true, true, true, true, false, false, true]);
    // Only the five admitted requests were charged: 5 × 3.6 s on global, 3 and 2 × 60 s on the ips.
    expect(await redis.client.mget('ratelimit:global', 'ratelimit:ip:192.0.2.1', 'ratelimit:ip:192.0.2.2')).toEqual([
      `${clock.now()} 18000000`,
      `${clock.now()} 10800000`,
      `${clock.now()} 7200000`,
    ]);
  });

  it('survives SCRIPT FLUSH in the middle of batched traffic: the batch is sent again as EVAL, once', async () => {
    const plan = planFor({ global: WIDE, ip: { limit: 1, windowSeconds: 3600, burst: 4 } });
    const store = new RedisDecisionStore(redis.client);
    const keys = plan.keys('192.0.2.1');
    expect((await store.decide(plan, keys)).allowed).toBe(true);
    await redis.client.script('FLUSH');
    const seen = await clientCommandsDuring(redis.server.url, async () => {
      const got = await Promise.all(Array.from({ length: 5 }, () => store.decide(plan, keys)));
      expect(got.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    });
    expect(seen).toEqual(['EVALSHA', 'EVAL']);
  });

  it('writes nothing when it refuses, and keys expire when their bucket is full again', async () => {
    const plan = planFor({
      global: { limit: 1000, windowSeconds: 3600, burst: 100 },
      ip: { limit: 60, windowSeconds: 60, burst: 3 },
    });
    const clock = new ManualClock();
    const store = new RedisDecisionStore(redis.client, clock);
    const keys = plan.keys('192.0.2.1');
    const started = Date.now();
    for (let i = 0; i < 3; i++) expect((await store.decide(plan, keys)).allowed).toBe(true);
    const before = await redis.client.mget(...keys);
    expect(before).toEqual([`${clock.now()} 10800000`, `${clock.now()} 180000`]);
    clock.advance(500);
    for (let i = 0; i < 5; i++) expect((await store.decide(plan, keys)).allowed).toBe(false);
    expect(await redis.client.mget(...keys)).toEqual(before);
    // PX = time until full: 3 requests × 3.6 s and × 1 s.
    // They count down in real time: at most what has elapsed since the first write is gone.
    const [gTtl, ipTtl] = await Promise.all(keys.map((k) => redis.client.pttl(k)));
    const elapsed = Date.now() - started;
    expect(gTtl).toBeGreaterThanOrEqual(10800 - elapsed - 1);
    expect(gTtl).toBeLessThanOrEqual(10800);
    expect(ipTtl).toBeGreaterThanOrEqual(3000 - elapsed - 1);
    expect(ipTtl).toBeLessThanOrEqual(3000);
  });

  it('reads Redis TIME when no clock is given', async () => {
    const plan = planFor({ global: WIDE, ip: WIDE });
    const before = Date.now();
    const d = await new RedisDecisionStore(redis.client).decide(plan, plan.keys('192.0.2.1'));
    const after = Date.now();
    // Same host: the Redis clock is the system clock, to the millisecond.
    expect(d.now).toBeGreaterThanOrEqual(before - 5);
    expect(d.now).toBeLessThanOrEqual(after + 5);
  });

  it('costs exactly one round trip per decision, whatever the number of tiers (requests one after another)', async () => {
    const store = new RedisDecisionStore(redis.client);
    // A global tier that drains slowly: its key must still be there to be read at the end (a WIDE
    // one drains in a millisecond and its key expires with it).
    const global: TierLimits = { limit: 1000, windowSeconds: 3600, burst: 1000 };
    const base = planFor({ global, ip: WIDE });
    const search = planFor({ global, ip: WIDE, search: WIDE }, 'search');
    // Each plan's script is loaded by its first call (EVALSHA → NOSCRIPT → EVAL); count after that.
    await store.decide(base, base.keys('192.0.2.1'));
    await store.decide(search, search.keys('192.0.2.1'));
    const seen = await clientCommandsDuring(redis.server.url, async () => {
      for (let i = 0; i < 25; i++) await store.decide(base, base.keys(`192.0.2.${i}`));
      for (let i = 0; i < 25; i++) await store.decide(search, search.keys(`192.0.2.${i}`));
    });
    expect(seen).toEqual(new Array(50).fill('EVALSHA'));
  });

  it('survives SCRIPT FLUSH: one EVAL reloads the script, state is kept, EVALSHA again afterwards', async () => {
    const plan = planFor({ global: WIDE, ip: { limit: 1, windowSeconds: 3600, burst: 2 } });
    const store = new RedisDecisionStore(redis.client);
    const keys = plan.keys('192.0.2.1');
    expect((await store.decide(plan, keys)).allowed).toBe(true);
    const script = store.scriptOf(plan);
    await redis.client.script('FLUSH');
    expect(await redis.client.script('EXISTS', script.sha)).toEqual([0]);
    const seen = await clientCommandsDuring(redis.server.url, async () => {
      expect((await store.decide(plan, keys)).allowed).toBe(true);
      expect((await store.decide(plan, keys)).allowed).toBe(false);
    });
    expect(seen).toEqual(['EVALSHA', 'EVAL', 'EVALSHA']);
    expect(await redis.client.script('EXISTS', script.sha)).toEqual([1]);
  });

  it('a probe runs the script without writing', async () => {
    await new RedisDecisionStore(redis.client).probe();
    expect(await redis.client.dbsize()).toBe(0);
  });

  it('the script hashes are the ones Redis computes; one script per plan, limits embedded', async () => {
    const store = new RedisDecisionStore(redis.client);
    const plan = planFor({
      global: { limit: 1000, windowSeconds: 3600, burst: 100 },
      ip: { limit: 100, windowSeconds: 60, burst: 20 },
    });
    const script = store.scriptOf(plan);
    expect(store.scriptOf(plan)).toBe(script);
    expect(script.source).toContain('local LIMITS = { { 1000, 3600000, 100 }, { 100, 60000, 20 } }');
    expect(script.source).toBe(decideSource(plan.tiers.map((t) => t.gcra)));
    expect(await redis.client.script('LOAD', script.source)).toBe(script.sha);
    expect(await redis.client.script('LOAD', probeScript.source)).toBe(probeScript.sha);
  });

  it('the generated script (snapshot)', () => {
    const plan = planFor({
      global: { limit: 1000, windowSeconds: 3600, burst: 100 },
      ip: { limit: 100, windowSeconds: 60, burst: 20 },
    });
    expect(new RedisDecisionStore(redis.client).scriptOf(plan).source).toMatchSnapshot();
  });
});
