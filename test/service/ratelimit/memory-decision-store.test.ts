import { LRUCache } from 'lru-cache';
import { ManualClock } from '../../helpers/manual-clock';
import { MemoryDecisionStore } from '../../../service/ratelimit/memory-decision-store';
import { planFor, WIDE } from './helpers';

describe('MemoryDecisionStore', () => {
  it('decides all tiers together: a refusal by one tier consumes nothing from the others', () => {
    const plan = planFor(
      {
        global: { limit: 10, windowSeconds: 60, burst: 10 },
        ip: { limit: 10, windowSeconds: 60, burst: 10 },
        search: { limit: 2, windowSeconds: 60, burst: 2 },
      },
      'search',
    );
    const store = new MemoryDecisionStore(new ManualClock(), 1000);
    const a = plan.keys('192.0.2.1');
    expect(store.decideAtOnce(plan, a).allowed).toBe(true);
    expect(store.decideAtOnce(plan, a).allowed).toBe(true);
    const before = store.decideAtOnce(plan, a);
    expect(before.allowed).toBe(false);
    for (let i = 0; i < 20; i++) expect(store.decideAtOnce(plan, a)).toEqual(before);
    // global and ip were charged for the two admitted requests only.
    expect(before.debts.slice(0, 2)).toEqual([120000, 120000]);
  });

  it('keeps memory bounded: never more than maxKeys keys, oldest evicted first', () => {
    const plan = planFor({ global: WIDE, ip: { limit: 1, windowSeconds: 3600, burst: 1 } });
    const store = new MemoryDecisionStore(new ManualClock(), 100);
    for (let i = 0; i < 10000; i++) store.decideAtOnce(plan, plan.keys(`10.0.${i >> 8}.${i & 255}`));
    expect(store.size).toBe(100);
    // The most recent client is still limited; the first one was evicted and starts afresh.
    expect(store.decideAtOnce(plan, plan.keys('10.0.39.15')).allowed).toBe(false);
    expect(store.decideAtOnce(plan, plan.keys('10.0.0.0')).allowed).toBe(true);
  });

  it('keeps an active key (the global one) however many clients pass', () => {
    const plan = planFor({ global: { limit: 1, windowSeconds: 3600, burst: 50 }, ip: WIDE });
    const store = new MemoryDecisionStore(new ManualClock(), 100);
    for (let i = 0; i < 50; i++) expect(store.decideAtOnce(plan, plan.keys(`10.1.0.${i}`)).allowed).toBe(true);
    for (let i = 0; i < 500; i++)
      expect(store.decideAtOnce(plan, plan.keys(`10.2.${i >> 8}.${i & 255}`)).allowed).toBe(false);
  });

  it('treats a drained key like a missing one and reuses it (no timers, no deletes)', () => {
    const plan = planFor({ global: WIDE, ip: { limit: 60, windowSeconds: 60, burst: 5 } });
    const clock = new ManualClock();
    const store = new MemoryDecisionStore(clock, 100);
    store.decideAtOnce(plan, plan.keys('192.0.2.1'));
    expect(store.size).toBe(2);
    clock.advance(1000);
    // The ip key's single request drained after 1 s: same as no key at all.
    const d = store.decideAtOnce(plan, plan.keys('192.0.2.1'));
    expect(d.debts[1]).toBe(60000);
    expect(store.size).toBe(2);
    // Hours later still the same: a full bucket, the entry reused in place.
    clock.advance(3_600_000);
    expect(store.decideAtOnce(plan, plan.keys('192.0.2.1')).debts[1]).toBe(60000);
    expect(store.size).toBe(2);
  });

  it('stays cheap when a handful of keys drain between requests (no O(maxKeys) work per request)', () => {
    // lru-cache's delete of the last entry clears every slot (O(max)): the store must never delete.
    const plan = planFor({ global: WIDE, ip: WIDE, search: WIDE }, 'search');
    const clock = new ManualClock();
    const store = new MemoryDecisionStore(clock, 1_000_000);
    const keys = plan.keys('192.0.2.1');
    const del = jest.spyOn(LRUCache.prototype, 'delete');
    const clear = jest.spyOn(LRUCache.prototype, 'clear');
    for (let i = 0; i < 1000; i++) {
      clock.advance(5);
      store.decideAtOnce(plan, keys);
    }
    expect(del).not.toHaveBeenCalled();
    expect(clear).not.toHaveBeenCalled();
    del.mockRestore();
    clear.mockRestore();
  });
});
