import { Writable } from 'node:stream';
import { Router } from 'express';
import pino, { type LevelWithSilent } from 'pino';
import {
  parseSettings,
  type EndpointTierName,
  type SettingsInput,
  type TierLimits,
  type TierName,
} from '../../../configs';
import type { Features } from '../../../service/features';
import { TierResolver, type TierPlan } from '../../../service/ratelimit/tiers';

/** Settings in production (multiplier 1) with the given tier limits. */
export function settingsWith(tiers: Partial<Record<TierName, TierLimits>>, input: SettingsInput = {}) {
  return parseSettings({
    ...input,
    service: { environment: 'production', ...input.service },
    rateLimit: { ...input.rateLimit, tiers },
  });
}

/** The plan for `global + ip (+ endpoint)` with the given limits (defaults elsewhere). */
export function planFor(tiers: Partial<Record<TierName, TierLimits>>, endpoint?: EndpointTierName): TierPlan {
  const r = new TierResolver(settingsWith(tiers).rateLimit);
  return endpoint ? r.plans[endpoint] : r.base;
}

/** Limits generous enough never to bind. */
export const WIDE: TierLimits = { limit: 100000000, windowSeconds: 1, burst: 100000000 };

/** A pino logger whose lines tests can read. */
export function captureLogger(level: LevelWithSilent = 'debug') {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  const logger = pino({ level }, stream);
  /** Lines at `level` (pino numbers: 30 info, 40 warn, 50 error) or all. */
  const at = (lvl?: number) => (lvl === undefined ? lines : lines.filter((l) => l.level === lvl));
  return { logger, lines, at };
}

/** Polls `check` every 20 ms until it is truthy (or fails after `timeoutMs`, naming `what`). */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A functional API stand-in: every path answers 200 with `{ok: true}` (the limiter sits in front).
 * Its answers carry `X-Stand-In`, so the contract check (helpers/contract-setup.ts) leaves them alone.
 */
export function stubFeatures(): Features {
  const router = Router();
  router.all('/api/{*rest}', (_req, res) => {
    res.set('X-Stand-In', 'features').json({ ok: true });
  });
  return {
    router,
    cache: { size: () => 0, maxSize: () => 0 },
    start: async () => undefined,
    close: async () => undefined,
  };
}
