import type { TierLimits, TierName } from '../../configs';

/** A finding about the configured limits, shown at startup (warn) and in `/api/rate-limit`'s `warnings`. */
export interface RateLimitWarning {
  /** Stable machine-readable code. */
  readonly code: 'one_client_can_exhaust_global';
  /** What happens and what to change, for the operator. */
  readonly message: string;
  /**
   * Seconds one client sending at its ip tier's full rate needs to empty a full global bucket
   * (0: its burst alone does). After that the global tier admits only its sustained rate, and the
   * client, sending faster, takes most of it: the others get 429.
   */
  readonly exhausts_after_seconds: number;
}

const perSecond = (t: TierLimits) => t.limit / t.windowSeconds;
const rate = (t: TierLimits) => `${t.limit} per ${t.windowSeconds} s = ${perSecond(t).toFixed(2)}/s, burst ${t.burst}`;

function duration(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/**
 * Whether one client alone can spend the whole global tier, from the effective limits: the ip tier
 * bounds what one client gets (every routed request passes it; endpoint tiers only narrow it), and
 * from full buckets that client is admitted `ip.burst + ip_rate × t` requests by time t against
 * the global tier's `global.burst + global_rate × t`. It catches up when its burst is at least the
 * global burst, or its sustained rate is above the global one: after
 * `(global.burst − ip.burst) / (ip_rate − global_rate)` seconds. GCRA has no window that resets,
 * so a catch-up after the global window is a catch-up still: it is reported whenever it can happen,
 * with the time it takes. The spec's production defaults (ip 100/60 s burst 20, global 1000/3600 s
 * burst 100) give about 58 s.
 */
export function oneClientStarvation(tiers: Readonly<Record<TierName, TierLimits>>): RateLimitWarning | undefined {
  const { ip, global } = tiers;
  const ipRate = perSecond(ip);
  const globalRate = perSecond(global);
  if (ip.burst < global.burst && ipRate <= globalRate) return undefined;
  const seconds = ip.burst >= global.burst ? 0 : (global.burst - ip.burst) / (ipRate - globalRate);
  const when =
    seconds === 0
      ? 'at once (its burst is the global burst)'
      : `in about ${duration(seconds)}${seconds <= global.windowSeconds ? ` (within the global window of ${duration(global.windowSeconds)})` : ''}`;
  const message =
    `one client at the ip tier's full rate (${rate(ip)}) can exhaust the global tier (${rate(global)}) ${when}; ` +
    'from then on it takes most of what the global tier admits and every other client gets 429 for as long as it keeps sending. ' +
    'Raise the global tier, lower the ip tier below the global rate and burst, or set RATE_LIMIT_IP_GLOBAL_SHARE (docs/rate-limiting.md)';
  return { code: 'one_client_can_exhaust_global', message, exhausts_after_seconds: Math.round(seconds * 10) / 10 };
}

/** Every warning about the effective limits (none while rate limiting is off). */
export function rateLimitWarnings(enabled: boolean, tiers: Readonly<Record<TierName, TierLimits>>): RateLimitWarning[] {
  if (!enabled) return [];
  const w = oneClientStarvation(tiers);
  return w ? [w] : [];
}
