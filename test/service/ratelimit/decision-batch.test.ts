import { DecisionBatch, parseBatchReply, UnexpectedReplyError } from '../../../service/ratelimit/decision-batch';
import type { Decision } from '../../../service/ratelimit/types';
import { planFor, WIDE } from './helpers';

const plan = planFor({ global: WIDE, ip: WIDE, search: WIDE }, 'search');

/** A batch of the given clients' requests, with what each request got. */
function batchOf(clients: readonly string[]) {
  const batch = new DecisionBatch(plan);
  const got: (Decision | Error)[] = [];
  clients.forEach((c, i) =>
    batch.add(
      plan.keys(c),
      (d) => (got[i] = d),
      (e) => (got[i] = e as Error),
    ),
  );
  return { batch, got };
}

describe('DecisionBatch', () => {
  it('sends each distinct key once and refers to keys by their 1-based index, one group per request', () => {
    const { batch } = batchOf(['192.0.2.1', '192.0.2.2', '192.0.2.1']);
    expect(batch.size).toBe(3);
    expect(batch.args('')).toEqual([
      '',
      5,
      'ratelimit:global',
      'ratelimit:ip:192.0.2.1',
      'ratelimit:search:192.0.2.1',
      'ratelimit:ip:192.0.2.2',
      'ratelimit:search:192.0.2.2',
      '',
      ...[1, 2, 3],
      ...[1, 4, 5],
      ...[1, 2, 3],
    ]);
    expect(batch.args('1700000000000')[7]).toBe('1700000000000');
  });

  it('hands each request its own decision, in order, with the shared clock', () => {
    const { batch, got } = batchOf(['192.0.2.1', '192.0.2.2']);
    batch.settle([1700, 1, 10, 20, 30, 0, 11, 0, 0]);
    expect(got).toEqual([
      { allowed: true, now: 1700, debts: [10, 20, 30] },
      { allowed: false, now: 1700, debts: [11, 0, 0] },
    ]);
  });

  it('fails every request on a command error, and on a reply of the wrong shape', () => {
    const failed = batchOf(['192.0.2.1', '192.0.2.2']);
    const err = new Error('Command timed out');
    failed.batch.fail(err);
    expect(failed.got).toEqual([err, err]);
    const short = batchOf(['192.0.2.1', '192.0.2.2']);
    short.batch.settle([1700, 1, 10, 20, 30]);
    expect(short.got).toHaveLength(2);
    for (const g of short.got) expect(g).toBeInstanceOf(UnexpectedReplyError);
  });

  it.each([
    ['not an array', 'OK', 2, 1],
    ['too short', [1, 1, 2], 2, 1],
    ['too long', [1, 1, 2, 3, 4], 2, 1],
    ['a string inside', [1, '1', 2, 3], 2, 1],
    ['nothing but the clock for one request', [1], 2, 1],
  ])('parseBatchReply rejects a reply %s', (_what, reply, tiers, count) => {
    expect(() => parseBatchReply(reply, tiers, count)).toThrow(UnexpectedReplyError);
  });

  it('parseBatchReply: the clock alone is the reply to zero requests (the probe)', () => {
    expect(parseBatchReply([1700], 0, 0)).toEqual([]);
  });
  it('settles once: a reply after a failure (a late reply past its deadline) is ignored, and the reverse', () => {
    const late = batchOf(['192.0.2.1']);
    late.batch.fail(new Error('Command timed out'));
    late.batch.settle([1700, 1, 1, 1, 1]);
    expect(late.got).toEqual([new Error('Command timed out')]);
    expect(late.batch.settled).toBe(true);
    const answered = batchOf(['192.0.2.1']);
    answered.batch.settle([1700, 1, 1, 1, 1]);
    answered.batch.fail(new Error('Command timed out'));
    expect(answered.got).toEqual([{ allowed: true, now: 1700, debts: [1, 1, 1] }]);
  });

  it('a failed batch resolves each request that has a recover with its decision, and rejects the others', () => {
    const batch = new DecisionBatch(plan);
    const got: (Decision | Error)[] = [];
    const seen: string[][] = [];
    const recover = (_err: unknown, p: typeof plan, keys: readonly string[]): Decision => {
      expect(p).toBe(plan);
      seen.push([...keys]);
      return { allowed: true, now: 7, debts: [0, 0, 0] };
    };
    batch.add(
      plan.keys('192.0.2.1'),
      (d) => (got[0] = d),
      (e) => (got[0] = e as Error),
      recover,
    );
    batch.add(
      plan.keys('192.0.2.2'),
      (d) => (got[1] = d),
      (e) => (got[1] = e as Error),
    );
    batch.fail(new Error('boom'));
    expect(got).toEqual([{ allowed: true, now: 7, debts: [0, 0, 0] }, new Error('boom')]);
    expect(seen).toEqual([plan.keys('192.0.2.1')]);
  });
});
