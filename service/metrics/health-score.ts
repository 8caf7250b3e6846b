import type { PerformanceGrade } from '../../contract';

/** Inputs of the health score. */
export interface HealthInputs {
  /** Success rate over the recent window, percent (100 with no traffic). */
  readonly recentSuccessRate: number;
  /** Requests in the recent window; below `MIN_VOLUME` the success rate is tempered. @default MIN_VOLUME */
  readonly recentCount?: number;
  /** Mean response time over the recent window, ms (0 with no traffic). */
  readonly avgResponseTimeMs: number;
  /** True when a configured kvstore is unreachable (memory fallback in use). */
  readonly kvstoreDegraded: boolean;
}

/**
 * Requests in the window below which the success rate is read with a prior of successes: the
 * missing requests up to this volume count as successful, so one 404 on an idle service does not
 * drop the score to 40 for five minutes.
 */
export const MIN_VOLUME = 20;

/** Latency at or under which the latency component is full. */
export const LATENCY_GOOD_MS = 200;
/** Latency at or over which the latency component is zero. */
export const LATENCY_BAD_MS = 2000;

/**
 * Health score 0–100 = 60% success + 30% latency + 10% dependencies, where
 * success = recent success rate (percent), with fewer than `MIN_VOLUME` recent requests the
 * missing ones counted as successes; latency = 100 at ≤ 200 ms falling linearly to 0 at
 * ≥ 2000 ms; dependencies = 100, or 0 while a configured kvstore is unreachable.
 * Rounded to one decimal.
 */
export function healthScore(h: HealthInputs): number {
  const rate = Math.min(100, Math.max(0, h.recentSuccessRate));
  const n = Math.max(0, h.recentCount ?? MIN_VOLUME);
  const success = n >= MIN_VOLUME ? rate : (n * rate + (MIN_VOLUME - n) * 100) / MIN_VOLUME;
  const span = LATENCY_BAD_MS - LATENCY_GOOD_MS;
  const latency = 100 * Math.min(1, Math.max(0, (LATENCY_BAD_MS - h.avgResponseTimeMs) / span));
  const deps = h.kvstoreDegraded ? 0 : 100;
  return Math.round((0.6 * success + 0.3 * latency + 0.1 * deps) * 10) / 10;
}

/** A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, F below. */
export function performanceGrade(score: number): PerformanceGrade {
  if (score >= 90) return 'A';
  if (score >= 80) return 'B';
  if (score >= 70) return 'C';
  if (score >= 60) return 'D';
  return 'F';
}
