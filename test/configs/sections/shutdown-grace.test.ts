import {
  segmentPersistWindowMs,
  SHUTDOWN_CLOSE_RESERVE_SECONDS,
  SHUTDOWN_GRACE_EXTRA_SECONDS,
  terminationGraceSeconds,
} from '../../../configs';

describe('the time after SIGTERM (configs/sections/shutdown-grace.ts)', () => {
  it('the pod gets the drain plus 10 s; the search segment must be persisted 2 s before the grace ends', () => {
    expect(SHUTDOWN_GRACE_EXTRA_SECONDS).toBe(10);
    expect(SHUTDOWN_CLOSE_RESERVE_SECONDS).toBe(2);
    expect(terminationGraceSeconds(10)).toBe(20);
    expect(terminationGraceSeconds(45)).toBe(55);
    expect(segmentPersistWindowMs(10)).toBe(18_000);
    // No drain at all still leaves the persist 8 s.
    expect(segmentPersistWindowMs(0)).toBe(8_000);
  });
});
