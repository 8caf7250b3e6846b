import type Redis from 'ioredis';
import { RedisDecisionStore } from '../../../service/ratelimit/redis-decision-store';
import { planFor, WIDE } from './helpers';

const base = planFor({ global: WIDE, ip: WIDE });
const search = planFor({ global: WIDE, ip: WIDE, search: WIDE }, 'search');

/** A client stand-in whose `call` does what `behave` says (the real one is tested against redis-server). */
function clientThat(behave: (args: (string | number)[]) => Promise<unknown>) {
  const calls: (string | number)[][] = [];
  const client = {
    call: (_command: string, args: (string | number)[]) => {
      calls.push([...args]);
      return behave(args);
    },
  } as unknown as Redis;
  return { client, calls };
}

describe('RedisDecisionStore batching (no server)', () => {
  it('a call that throws at once fails its batch alone; the other plan of the turn is still answered', async () => {
    const { client, calls } = clientThat((args) => {
      // The base plan's batch has 2 keys; throw for it, answer the search batch (one request, 3 tiers).
      if (args[1] === 2) throw new Error('synchronous failure');
      return Promise.resolve([1700, 1, 1, 1, 1]);
    });
    const store = new RedisDecisionStore(client);
    const [a, b] = await Promise.allSettled([
      store.decide(base, base.keys('192.0.2.1')),
      store.decide(search, search.keys('192.0.2.1')),
    ]);
    expect(a).toMatchObject({ status: 'rejected', reason: new Error('synchronous failure') });
    expect(b).toEqual({ status: 'fulfilled', value: { allowed: true, now: 1700, debts: [1, 1, 1] } });
    expect(calls).toHaveLength(2);
    // The store keeps working afterwards.
    await expect(store.decide(search, search.keys('192.0.2.2'))).resolves.toMatchObject({ allowed: true });
  });

  it('a rejected call fails every request of its batch with that one error', async () => {
    const err = new Error('Command timed out');
    const { client } = clientThat(() => Promise.reject(err));
    const store = new RedisDecisionStore(client);
    const got = await Promise.allSettled([1, 2, 3].map((i) => store.decide(base, base.keys(`192.0.2.${i}`))));
    expect(got).toEqual([1, 2, 3].map(() => ({ status: 'rejected', reason: err })));
  });

  it('requests of one turn go out together when the turn ends, not before', async () => {
    const { client, calls } = clientThat(() => Promise.resolve([1700, 1, 1, 1, 1, 1, 1]));
    const store = new RedisDecisionStore(client);
    const pending = [store.decide(base, base.keys('192.0.2.1')), store.decide(base, base.keys('192.0.2.2'))];
    await Promise.resolve();
    expect(calls).toHaveLength(0);
    await Promise.all(pending);
    expect(calls).toHaveLength(1);
    // [slot, 3 keys, the keys, now, refs of two requests]
    expect(calls[0].slice(1)).toEqual([
      3,
      'ratelimit:global',
      'ratelimit:ip:192.0.2.1',
      'ratelimit:ip:192.0.2.2',
      '',
      1,
      2,
      1,
      3,
    ]);
  });
});
