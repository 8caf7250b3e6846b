import Redis from 'ioredis';
import { LuaScript } from '../../../../service/ratelimit/lua/script';
import { ScriptRunner } from '../../../../service/ratelimit/script-runner';
import { clientCommandsDuring } from '../../../../tools/harness/redis-monitor';
import { redisServerForSuite } from '../../../helpers/redis-server';
import { planFor, WIDE } from '../helpers';

/** Writes its argument under its key and answers it back: a script with a visible effect. */
const echo = new LuaScript("redis.call('SET', KEYS[1], ARGV[1]) return ARGV[1]");
/** Fails in Redis with a script error (not NOSCRIPT). */
const failing = new LuaScript("return redis.error_reply('ERR made to fail')");

describe('ScriptRunner against a real redis-server', () => {
  const redis = redisServerForSuite();

  it('run: EVALSHA; after SCRIPT FLUSH one NOSCRIPT answered by EVAL, which caches it again', async () => {
    const runner = new ScriptRunner(redis.client);
    await redis.client.script('LOAD', echo.source);
    const seen = await clientCommandsDuring(redis.server.url, async () => {
      expect(await runner.run(echo, ['', 1, 'k', 'a'])).toBe('a');
      await redis.client.script('FLUSH');
      expect(await runner.run(echo, ['', 1, 'k', 'b'])).toBe('b');
      expect(await runner.run(echo, ['', 1, 'k', 'c'])).toBe('c');
    });
    expect(seen).toEqual(['EVALSHA', 'SCRIPT', 'EVALSHA', 'EVAL', 'EVALSHA']);
    expect(await redis.client.get('k')).toBe('c');
    // Calls count what was asked for, not the EVAL retry.
    expect(runner.calls).toBe(3);
  });

  it('run: an error other than NOSCRIPT rejects as it is, without an EVAL', async () => {
    const runner = new ScriptRunner(redis.client);
    await redis.client.script('LOAD', failing.source);
    const seen = await clientCommandsDuring(redis.server.url, async () => {
      await expect(runner.run(failing, ['', 0])).rejects.toThrow('made to fail');
    });
    expect(seen).toEqual(['EVALSHA']);
  });

  // Batches take the client's own timeout per command, or one deadline timer for all (commandTimeout).
  describe.each([
    ['without a command timeout', {}],
    ['with a command timeout (untimed commands, one deadline timer)', { commandTimeout: 2000 }],
  ])('batches %s', (_name, options) => {
    let own: Redis;
    let runner: ScriptRunner;
    beforeAll(() => {
      own = new Redis(redis.server.url, options);
      runner = new ScriptRunner(own);
    });
    afterAll(() => {
      runner.close();
      own.disconnect();
    });

    it('a turn is one EVALSHA; after SCRIPT FLUSH the batch is sent again as EVAL, once, and decided once', async () => {
      await redis.client.flushall();
      const plan = planFor({ global: WIDE, ip: { limit: 1, windowSeconds: 3600, burst: 3 } });
      const keys = plan.keys('192.0.2.1');
      expect((await runner.decide(plan, plan, keys)).allowed).toBe(true);
      await redis.client.script('FLUSH');
      const seen = await clientCommandsDuring(redis.server.url, async () => {
        const got = await Promise.all([1, 2, 3].map(() => runner.decide(plan, plan, keys)));
        expect(got.map((d) => d.allowed)).toEqual([true, true, false]);
        expect((await runner.decide(plan, plan, keys)).allowed).toBe(false);
      });
      expect(seen).toEqual(['EVALSHA', 'EVAL', 'EVALSHA']);
      // Three admitted in all, charged once each (an hour per request on the ip key, less what drained).
      const debt = Number((await redis.client.get('ratelimit:ip:192.0.2.1'))!.split(' ')[1]);
      expect(debt).toBeLessThanOrEqual(3 * 3_600_000);
      expect(debt).toBeGreaterThan(2.9 * 3_600_000);
    });
  });
});
