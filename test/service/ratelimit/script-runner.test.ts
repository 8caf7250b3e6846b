import type Redis from 'ioredis';
import { ScriptRunner } from '../../../service/ratelimit/script-runner';
import { planFor, WIDE } from './helpers';

describe('ScriptRunner batching (no server; the real one is in integration/script-runner.test.ts)', () => {
  it('two plans queued under one batch id: the earlier batch is sent, never dropped', async () => {
    const calls: (string | number)[][] = [];
    // Answers each batch of one request with "admitted, debt 1 per tier" (its tier count from the key count).
    const client = {
      call: (_command: string, args: (string | number)[]) => {
        calls.push([...args]);
        return Promise.resolve([1700, 1, ...new Array<number>(Number(args[1])).fill(1)]);
      },
    } as unknown as Redis;
    const runner = new ScriptRunner<string>(client);
    const base = planFor({ global: WIDE, ip: WIDE });
    const search = planFor({ global: WIDE, ip: WIDE, search: WIDE }, 'search');
    const got = await Promise.all([
      runner.decide('one id', base, base.keys('192.0.2.1')),
      runner.decide('one id', search, search.keys('192.0.2.1')),
    ]);
    expect(got).toEqual([
      { allowed: true, now: 1700, debts: [1, 1] },
      { allowed: true, now: 1700, debts: [1, 1, 1] },
    ]);
    expect(calls).toHaveLength(2);
  });
});
