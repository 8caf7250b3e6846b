import type { ServerResponse } from 'node:http';
import { ManualClock } from '../../helpers/manual-clock';
import { exceededBody, writeRateLimitHeaders } from '../../../service/ratelimit/headers';
import { MemoryDecisionStore } from '../../../service/ratelimit/memory-decision-store';
import { verdictOf } from '../../../service/ratelimit/verdict';
import { planFor } from './helpers';

/** Just enough of a response to collect headers. */
function fakeResponse() {
  const headers: Record<string, string> = {};
  const res = { setHeader: (k: string, v: string) => (headers[k.toLowerCase()] = v) } as unknown as ServerResponse;
  return { res, headers };
}

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0); // a whole second: Unix 1767268800

describe('verdict and headers', () => {
  const plan = planFor(
    {
      global: { limit: 1000, windowSeconds: 3600, burst: 100 },
      ip: { limit: 100, windowSeconds: 60, burst: 20 },
      search: { limit: 60, windowSeconds: 60, burst: 15 },
    },
    'search',
  );
  const keys = plan.keys('192.0.2.1');

  function run(n: number, clock = new ManualClock(T0), store = new MemoryDecisionStore(clock, 1000)) {
    let d = store.decideAtOnce(plan, keys);
    for (let i = 1; i < n; i++) d = store.decideAtOnce(plan, keys);
    return { d, v: verdictOf(plan, d), clock, store };
  }

  it('describes the most constrained tier after the first request', () => {
    const { d, v } = run(1);
    expect(v.remaining).toEqual([99, 19, 14]);
    // global: 1 request × 3.6 s; ip: 0.6 s; search: 1 s until full.
    expect(v.msUntilFull).toEqual([3600, 600, 1000]);
    expect(v.shown).toBe(2);
    const { res, headers } = fakeResponse();
    writeRateLimitHeaders(res, plan, v, d.now);
    expect(headers).toEqual({
      'x-ratelimit-limit': '60',
      'x-ratelimit-remaining': '14',
      'x-ratelimit-reset': String(T0 / 1000 + 1),
      'ratelimit-policy': '"global";q=1000;w=3600, "ip";q=100;w=60, "search";q=60;w=60',
      ratelimit: '"global";r=99;t=4, "ip";r=19;t=1, "search";r=14;t=1',
    });
  });

  it('on the 16th request at once: 429 with Retry-After 1 naming the search tier', () => {
    const { d, v } = run(16);
    expect(d.allowed).toBe(false);
    expect(v.shown).toBe(2);
    expect(v.admitted).toEqual([true, true, false]);
    expect(v.retryAfterSeconds).toBe(1);
    const { res, headers } = fakeResponse();
    writeRateLimitHeaders(res, plan, v, d.now);
    expect(headers['x-ratelimit-limit']).toBe('60');
    expect(headers['x-ratelimit-remaining']).toBe('0');
    // 15 requests in the search bucket drain in 15 s.
    expect(headers['x-ratelimit-reset']).toBe(String(T0 / 1000 + 15));
    expect(headers['retry-after']).toBe('1');
    expect(exceededBody(plan, v)).toEqual({
      error: 'rate_limit_exceeded',
      message: 'Rate limit exceeded for the search tier (60 requests per 60 s, burst 15); retry in 1 s',
      retry_after: 1,
    });
  });

  it('rounds Retry-After up to whole seconds and never below 1', () => {
    const slow = planFor({
      global: { limit: 1000, windowSeconds: 3600, burst: 100 },
      ip: { limit: 7, windowSeconds: 60, burst: 1 },
    });
    const clock = new ManualClock(T0);
    const store = new MemoryDecisionStore(clock, 1000);
    const k = slow.keys('192.0.2.1');
    expect(store.decideAtOnce(slow, k).allowed).toBe(true);
    // Next fits after 8572 ms: 9 s at first, 1 s when only 572 ms (or 1 ms) are left.
    expect(verdictOf(slow, store.decideAtOnce(slow, k)).retryAfterSeconds).toBe(9);
    clock.advance(8000);
    expect(verdictOf(slow, store.decideAtOnce(slow, k)).retryAfterSeconds).toBe(1);
    clock.advance(571);
    expect(verdictOf(slow, store.decideAtOnce(slow, k)).retryAfterSeconds).toBe(1);
    clock.advance(1);
    expect(store.decideAtOnce(slow, k).allowed).toBe(true);
  });

  it('when several tiers refuse, names the one with the longest wait', () => {
    const tight = planFor(
      {
        global: { limit: 1, windowSeconds: 3600, burst: 1 },
        ip: { limit: 1, windowSeconds: 60, burst: 1 },
        search: { limit: 1, windowSeconds: 10, burst: 1 },
      },
      'search',
    );
    const store = new MemoryDecisionStore(new ManualClock(T0), 1000);
    const k = tight.keys('192.0.2.1');
    store.decideAtOnce(tight, k);
    const v = verdictOf(tight, store.decideAtOnce(tight, k));
    expect(v.admitted).toEqual([false, false, false]);
    expect(tight.tiers[v.shown].name).toBe('global');
    expect(v.retryAfterSeconds).toBe(3600);
  });

  it('breaks ties in remaining by the later full-again time, then the more specific tier', () => {
    const even = planFor(
      {
        global: { limit: 10, windowSeconds: 60, burst: 5 },
        ip: { limit: 10, windowSeconds: 60, burst: 5 },
        search: { limit: 5, windowSeconds: 60, burst: 5 },
      },
      'search',
    );
    const store = new MemoryDecisionStore(new ManualClock(T0), 1000);
    const v = verdictOf(even, store.decideAtOnce(even, even.keys('192.0.2.1')));
    expect(v.remaining).toEqual([4, 4, 4]);
    // search refills at 5/min: its bucket is full last.
    expect(even.tiers[v.shown].name).toBe('search');
    const same = planFor({
      global: { limit: 10, windowSeconds: 60, burst: 5 },
      ip: { limit: 10, windowSeconds: 60, burst: 5 },
    });
    const fresh = new MemoryDecisionStore(new ManualClock(T0), 1000);
    const v2 = verdictOf(same, fresh.decideAtOnce(same, same.keys('192.0.2.2')));
    expect(v2.remaining).toEqual([4, 4]);
    expect(same.tiers[v2.shown].name).toBe('ip');
  });

  it('X-RateLimit-Reset is when the bucket is full again, in Unix seconds rounded up', () => {
    const { d, v } = run(3, new ManualClock(T0 + 250));
    const { res, headers } = fakeResponse();
    writeRateLimitHeaders(res, plan, v, d.now);
    // 3 requests in the search bucket: full 3 s later, at T0 + 3.25 s → rounded up to T0 + 4 s.
    expect(headers['x-ratelimit-reset']).toBe(String(T0 / 1000 + 4));
    expect(headers['retry-after']).toBeUndefined();
  });
});
