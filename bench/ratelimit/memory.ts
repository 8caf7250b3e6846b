/**
 * Child-process entry (`node --expose-gc`): heap held by the memory store after `CLIENTS` distinct
 * client keys (one request each, IP + Global), with the default key cap. Prints one JSON line.
 */
import { DEFAULT_RATE_LIMIT, parseSettings } from '../../configs';
import { systemClock } from '../../service/lib/clock';
import { MemoryDecisionStore } from '../../service/ratelimit/memory-decision-store';
import { TierResolver } from '../../service/ratelimit/tiers';
import { collectGarbage } from '../collect-garbage';

/** Distinct clients sent through the store. */
export const CLIENTS = 1_000_000;

/** What the memory benchmark reports. */
export interface MemoryResult {
  readonly clients: number;
  readonly maxKeys: number;
  readonly keysHeld: number;
  readonly heapBytes: number;
  readonly bytesPerKey: number;
  readonly decisionsPerSecond: number;
}

function heapAfterGc(): number {
  collectGarbage(3);
  return process.memoryUsage().heapUsed;
}

function main(): void {
  const maxKeys = DEFAULT_RATE_LIMIT.memoryMaxKeys;
  const tier = { limit: 100_000_000, windowSeconds: 3600, burst: 100_000_000 };
  const resolver = new TierResolver(parseSettings({ rateLimit: { tiers: { global: tier, ip: tier } } }).rateLimit);
  const plan = resolver.base;
  const store = new MemoryDecisionStore(systemClock, maxKeys);
  const before = heapAfterGc();
  const started = process.hrtime.bigint();
  for (let i = 0; i < CLIENTS; i++) {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    store.decideAtOnce(plan, plan.keys(ip));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const heapBytes = heapAfterGc() - before;
  const result: MemoryResult = {
    clients: CLIENTS,
    maxKeys,
    keysHeld: store.size,
    heapBytes,
    bytesPerKey: Math.round(heapBytes / store.size),
    decisionsPerSecond: Math.round(CLIENTS / seconds),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (require.main === module) main();
