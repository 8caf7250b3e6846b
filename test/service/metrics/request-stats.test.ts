import { ManualClock } from '../../helpers/manual-clock';
import { RequestStats } from '../../../service/metrics/request-stats';

describe('RequestStats', () => {
  it('with no traffic reports 100% success and 0 ms', () => {
    const s = new RequestStats(new ManualClock()).snapshot();
    expect(s).toMatchObject({
      total: 0,
      successful: 0,
      failed: 0,
      successRate: 100,
      avgResponseTimeMs: 0,
      recentSuccessRate: 100,
    });
  });

  it('counts success as status < 400 and keeps total = successful + failed', () => {
    const stats = new RequestStats(new ManualClock());
    for (const status of [200, 201, 302, 399, 400, 404, 429, 500, 503]) stats.record('search', status, 10);
    const s = stats.snapshot();
    expect(s.total).toBe(9);
    expect(s.successful).toBe(4);
    expect(s.failed).toBe(5);
    expect(s.successful + s.failed).toBe(s.total);
    expect(s.successRate).toBeCloseTo((100 * 4) / 9);
  });

  it('averages over the recent window only', () => {
    const clock = new ManualClock();
    const stats = new RequestStats(clock, 300);
    stats.record('search', 200, 1000);
    clock.advance(200_000);
    stats.record('search', 200, 10);
    stats.record('chat', 500, 30);
    expect(stats.snapshot().avgResponseTimeMs).toBeCloseTo((1000 + 10 + 30) / 3);
    clock.advance(150_000); // the first request is now 350 s old
    const s = stats.snapshot();
    expect(s.avgResponseTimeMs).toBeCloseTo(20);
    expect(s.recentSuccessRate).toBe(50);
    expect(s.total).toBe(3); // lifetime counters keep everything
    expect(s.byType.search).toEqual({ count: 2, avgTimeMs: 10 });
    expect(s.byType.chat).toEqual({ count: 1, avgTimeMs: 30 });
    clock.advance(400_000);
    expect(stats.snapshot()).toMatchObject({ avgResponseTimeMs: 0, recentSuccessRate: 100, total: 3 });
  });

  it('reuses ring buckets after the window wraps', () => {
    const clock = new ManualClock(0);
    const stats = new RequestStats(clock, 10);
    stats.record('other', 200, 100);
    clock.advance(10_000); // same bucket index, new second
    stats.record('other', 200, 2);
    expect(stats.snapshot().avgResponseTimeMs).toBe(2);
  });

  it('adds tokens, ignoring nonsense', () => {
    const stats = new RequestStats(new ManualClock());
    stats.addTokens(120);
    stats.addTokens(-5);
    stats.addTokens(Number.NaN);
    stats.addTokens(2.4);
    expect(stats.snapshot().tokensUsed).toBe(122);
  });
});
