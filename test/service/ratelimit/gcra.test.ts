import {
  admits,
  debtAt,
  gcraLimits,
  msUntilAdmitted,
  msUntilFull,
  remaining,
  stampAt,
  type GcraLimits,
  type GcraState,
} from '../../../service/ratelimit/gcra';

/** A single key driven through the pure functions, as the stores do. */
class Bucket {
  state: GcraState | undefined;
  constructor(readonly g: GcraLimits) {}
  hit(now: number): boolean {
    const debt = debtAt(this.state, now, this.g);
    if (!admits(debt, this.g)) return false;
    this.state = { t: stampAt(this.state, now), debt: debt + this.g.windowMs };
    return true;
  }
  debt(now: number): number {
    return debtAt(this.state, now, this.g);
  }
}

const T0 = Date.UTC(2026, 0, 1);

describe('gcra', () => {
  it('derives integer parameters from a tier', () => {
    expect(gcraLimits({ limit: 60, windowSeconds: 60, burst: 15 })).toEqual({
      limit: 60,
      windowMs: 60000,
      burst: 15,
      capacity: 900000,
    });
  });

  it('admits exactly burst requests at once, then one per window/limit', () => {
    const b = new Bucket(gcraLimits({ limit: 60, windowSeconds: 60, burst: 15 }));
    for (let i = 0; i < 15; i++) expect(b.hit(T0)).toBe(true);
    expect(b.hit(T0)).toBe(false);
    expect(b.hit(T0 + 999)).toBe(false);
    expect(b.hit(T0 + 1000)).toBe(true);
    expect(b.hit(T0 + 1000)).toBe(false);
    // Sustained: exactly one per second from here on.
    for (let s = 2; s < 200; s++) {
      expect(b.hit(T0 + s * 1000 - 1)).toBe(false);
      expect(b.hit(T0 + s * 1000)).toBe(true);
    }
  });

  it('keeps an uneven rate (7 per minute) exact over many periods, without drift', () => {
    const g = gcraLimits({ limit: 7, windowSeconds: 60, burst: 3 });
    const b = new Bucket(g);
    for (let i = 0; i < 3; i++) expect(b.hit(T0)).toBe(true);
    for (let k = 1; k <= 700; k++) {
      // The k-th request after the burst fits exactly at ceil(k × 60000 / 7) ms.
      const at = T0 + Math.ceil((k * 60000) / 7);
      expect(b.hit(at - 1)).toBe(false);
      expect(b.hit(at)).toBe(true);
    }
  });

  it('refills to the full burst after an idle period and never beyond it', () => {
    const b = new Bucket(gcraLimits({ limit: 10, windowSeconds: 60, burst: 5 }));
    for (let i = 0; i < 5; i++) b.hit(T0);
    const later = T0 + 3_600_000;
    expect(b.debt(later)).toBe(0);
    for (let i = 0; i < 5; i++) expect(b.hit(later)).toBe(true);
    expect(b.hit(later)).toBe(false);
  });

  it('a refused request consumes nothing: hammering does not delay the next admission', () => {
    const g = gcraLimits({ limit: 60, windowSeconds: 60, burst: 2 });
    const b = new Bucket(g);
    b.hit(T0);
    b.hit(T0);
    const before = b.state;
    for (let ms = 0; ms < 1000; ms += 7) expect(b.hit(T0 + ms)).toBe(false);
    expect(b.state).toBe(before);
    expect(b.hit(T0 + 1000)).toBe(true);
  });

  it('reports remaining, time to full and time to the next admission exactly', () => {
    const g = gcraLimits({ limit: 60, windowSeconds: 60, burst: 15 });
    expect(remaining(0, g)).toBe(15);
    expect(msUntilFull(0, g)).toBe(0);
    expect(msUntilAdmitted(0, g)).toBe(0);
    // 15 requests in: empty bucket, 15 s until full, 1 s until the next one fits.
    expect(remaining(900000, g)).toBe(0);
    expect(msUntilFull(900000, g)).toBe(15000);
    expect(msUntilAdmitted(900000, g)).toBe(1000);
    // 400 ms later: 24000 units drained, still none left, 600 ms to wait.
    expect(remaining(876000, g)).toBe(0);
    expect(msUntilAdmitted(876000, g)).toBe(600);
    // One unit short of a whole request: still 0 remaining; exactly one request: 1.
    expect(remaining(840001, g)).toBe(0);
    expect(remaining(840000, g)).toBe(1);
    expect(msUntilFull(1, g)).toBe(1);
  });

  it('rounds time up to whole milliseconds for uneven rates', () => {
    const g = gcraLimits({ limit: 7, windowSeconds: 60, burst: 1 });
    expect(msUntilAdmitted(60000, g)).toBe(8572);
    expect(msUntilFull(60000, g)).toBe(8572);
  });

  it('keeps the debt when the clock reads earlier than the stored time', () => {
    const g = gcraLimits({ limit: 60, windowSeconds: 60, burst: 15 });
    const state = { t: T0 + 5000, debt: 120000 };
    expect(debtAt(state, T0, g)).toBe(120000);
    expect(stampAt(state, T0)).toBe(T0 + 5000);
    expect(stampAt(state, T0 + 6000)).toBe(T0 + 6000);
    expect(stampAt(undefined, T0)).toBe(T0);
  });

  it('stays exact with a capacity just below 2^53', () => {
    // capacity = 10^8 × 86,400,000 = 8.64·10^15; one unit short of it is still one request short.
    const g = gcraLimits({ limit: 1, windowSeconds: 86400, burst: 100000000 });
    expect(remaining(1, g)).toBe(99999999);
    expect(remaining(0, g)).toBe(100000000);
  });
});
