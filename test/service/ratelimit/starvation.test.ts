import { capIpTier, type TierLimits } from '../../../configs';
import { ManualClock } from '../../helpers/manual-clock';
import { MemoryDecisionStore } from '../../../service/ratelimit/memory-decision-store';
import { oneClientStarvation, rateLimitWarnings } from '../../../service/ratelimit/starvation';
import { TierResolver } from '../../../service/ratelimit/tiers';
import { verdictOf } from '../../../service/ratelimit/verdict';
import { settingsWith, WIDE } from './helpers';

const SPEC_GLOBAL: TierLimits = { limit: 1000, windowSeconds: 3600, burst: 100 };
const SPEC_IP: TierLimits = { limit: 100, windowSeconds: 60, burst: 20 };
const tiers = (ip: TierLimits, global: TierLimits) => ({ global, ip, search: WIDE, chat: WIDE, upload: WIDE });

/**
 * One client sending `perSecond` requests a second against the real memory store (GCRA), from
 * full buckets: the first second at which the global tier refuses it, or undefined within `maxSeconds`.
 */
function firstGlobalRefusal(
  settings: ReturnType<typeof settingsWith>,
  perSecond: number,
  maxSeconds: number,
): number | undefined {
  const clock = new ManualClock();
  const store = new MemoryDecisionStore(clock, 1000);
  const plan = new TierResolver(settings.rateLimit).base;
  const start = clock.now();
  const step = 1000 / perSecond;
  for (let t = 0; t < maxSeconds * 1000; t += step) {
    clock.set(start + t);
    const v = verdictOf(plan, store.decideAtOnce(plan, plan.keys('203.0.113.7')));
    if (!v.admitted[0]) return t / 1000;
    // Someone else still gets in while the global tier has room: checked by the caller.
  }
  return undefined;
}

describe('oneClientStarvation', () => {
  it("warns under the spec's production defaults: one client empties the global tier in about 58 s", () => {
    const w = oneClientStarvation(tiers(SPEC_IP, SPEC_GLOBAL));
    expect(w).toMatchObject({ code: 'one_client_can_exhaust_global', exhausts_after_seconds: 57.6 });
    expect(w!.message).toContain('in about 58 s (within the global window of 60 min)');
    expect(w!.message).toContain('RATE_LIMIT_IP_GLOBAL_SHARE');
  });

  it('matches what the real GCRA store does to a client sending 20 requests a second (the issue measured about 55 s)', () => {
    const refusedAt = firstGlobalRefusal(settingsWith(tiers(SPEC_IP, SPEC_GLOBAL)), 20, 600);
    const predicted = oneClientStarvation(tiers(SPEC_IP, SPEC_GLOBAL))!.exhausts_after_seconds;
    expect(refusedAt).toBeDefined();
    expect(Math.abs(refusedAt! - predicted)).toBeLessThan(1.5);
  });

  it('says nothing when one client cannot catch up with the global tier', () => {
    expect(oneClientStarvation(tiers({ limit: 10, windowSeconds: 60, burst: 20 }, SPEC_GLOBAL))).toBeUndefined();
    expect(oneClientStarvation(tiers({ limit: 1000, windowSeconds: 3600, burst: 99 }, SPEC_GLOBAL))).toBeUndefined();
  });

  it('warns at once when the ip burst is the global burst, and past the global window when the rates are close', () => {
    expect(
      oneClientStarvation(tiers({ limit: 1, windowSeconds: 3600, burst: 100 }, SPEC_GLOBAL))!.exhausts_after_seconds,
    ).toBe(0);
    const slow = oneClientStarvation(tiers({ limit: 1001, windowSeconds: 3600, burst: 20 }, SPEC_GLOBAL))!;
    expect(slow.exhausts_after_seconds).toBe(288000);
    expect(slow.message).toContain('in about 80.0 h;');
  });

  it('is empty while rate limiting is off', () => {
    expect(rateLimitWarnings(false, tiers(SPEC_IP, SPEC_GLOBAL))).toEqual([]);
  });
});

describe('RATE_LIMIT_IP_GLOBAL_SHARE (capIpTier)', () => {
  it('lowers the ip tier to the share of the global rate and burst, keeping its window when it can', () => {
    expect(capIpTier(SPEC_IP, SPEC_GLOBAL, 0.5)).toEqual({ limit: 8, windowSeconds: 60, burst: 20 });
    expect(capIpTier(SPEC_IP, SPEC_GLOBAL, 0.1)).toEqual({ limit: 1, windowSeconds: 60, burst: 10 });
    // Under one request per ip window: written over the global window instead (same GCRA rate).
    expect(capIpTier(SPEC_IP, SPEC_GLOBAL, 0.05)).toEqual({ limit: 50, windowSeconds: 3600, burst: 5 });
    // Never raised.
    expect(capIpTier({ limit: 1, windowSeconds: 60, burst: 2 }, SPEC_GLOBAL, 1)).toEqual({
      limit: 1,
      windowSeconds: 60,
      burst: 2,
    });
  });

  it('is applied to the effective limits once, at parse time, and then nothing warns', () => {
    const s = settingsWith(tiers(SPEC_IP, SPEC_GLOBAL), { rateLimit: { ipGlobalShare: 0.5 } });
    expect(s.rateLimit.effective.tiers.ip).toEqual({ limit: 8, windowSeconds: 60, burst: 20 });
    expect(s.rateLimit.effective.ipBeforeShareCap).toEqual(SPEC_IP);
    expect(rateLimitWarnings(true, s.rateLimit.effective.tiers)).toEqual([]);
    // Unset: the spec's defaults as they are.
    expect(settingsWith(tiers(SPEC_IP, SPEC_GLOBAL)).rateLimit.effective.tiers.ip).toEqual(SPEC_IP);
  });

  it('keeps a flooding client from emptying the global tier in the real GCRA store', () => {
    const s = settingsWith(tiers(SPEC_IP, SPEC_GLOBAL), { rateLimit: { ipGlobalShare: 0.5 } });
    // Two hours of one client sending 20 a second: the global tier never refuses it.
    expect(firstGlobalRefusal(s, 20, 7200)).toBeUndefined();
  });
});
