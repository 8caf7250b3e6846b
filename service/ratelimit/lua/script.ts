import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import type { GcraLimits } from '../gcra';

/**
 * The source of the script that decides every tier of one request in one atomic step: the GCRA of
 * gcra.ts, line by line. One script per tier plan: the plan's limits are constants in the source
 * (they are fixed for the life of the process), so a call carries only the keys and the clock.
 *
 * KEYS[i]  the key of tier i (global, ip, then the endpoint tier), with `limits[i]`.
 * ARGV[1]  "now" in ms, or "" to read Redis `TIME` (the default: replicas share one clock).
 *
 * Each key holds "<t> <debt>" with a PX expiry at the moment its bucket is full again, so idle
 * keys vanish on their own. The script reads every tier first (one MGET) and writes only when all
 * admit: a refused request consumes nothing anywhere. Reply: { allowed (1|0), now, debt_1, ...,
 * debt_n }, every debt as of `now` after the decision. With no keys it only reads the clock.
 */
export function decideSource(limits: readonly GcraLimits[]): string {
  const table = limits.map((g) => `{ ${g.limit}, ${g.windowMs}, ${g.burst} }`).join(', ');
  return `
-- limit (requests per window), window (ms) and burst of each tier, in KEYS order
local LIMITS = { ${table} }
-- Redis < 7 (no REDIS_VERSION_NUM) must replicate effects to write after TIME; 7+ always does.
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then redis.replicate_commands() end
local now
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
local n = #KEYS
local values = n > 0 and redis.call('MGET', unpack(KEYS)) or {}
local debts = {}
local stamps = {}
local allowed = 1
for i = 1, n do
  local limit, window = LIMITS[i][1], LIMITS[i][2]
  local capacity = LIMITS[i][3] * window
  local debt = 0
  local stamp = now
  local value = values[i]
  if value then
    local space = string.find(value, ' ', 1, true)
    local t = tonumber(string.sub(value, 1, space - 1))
    debt = tonumber(string.sub(value, space + 1))
    if now > t then
      debt = debt - (now - t) * limit
      if debt < 0 then debt = 0 end
    else
      stamp = t
    end
  end
  if debt + window > capacity then allowed = 0 end
  debts[i] = debt
  stamps[i] = stamp
end
if allowed == 1 then
  for i = 1, n do
    local debt = debts[i] + LIMITS[i][2]
    debts[i] = debt
    redis.call('SET', KEYS[i], string.format('%.0f %.0f', stamps[i], debt), 'PX', math.ceil(debt / LIMITS[i][1]))
  end
end
local reply = { allowed, now }
for i = 1, n do reply[i + 2] = debts[i] end
return reply
`.trim();
}

/** True for Redis's "script not in cache" reply (after `SCRIPT FLUSH`, a restart or a failover). */
export function isNoScriptError(err: unknown): boolean {
  return err instanceof Error && /^NOSCRIPT(?:\s|$)/.test(err.message);
}

/**
 * A Lua script run by its SHA1. `EVALSHA` sends only the hash; when Redis answers NOSCRIPT the
 * same call is repeated once as `EVAL`, which runs the script and caches it again, so a flushed
 * script costs one extra round trip once and never an error.
 */
export class LuaScript {
  /** SHA1 of the source, as Redis computes it. */
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Runs the script. `args` is `[slot, numKeys, ...keys, ...argv]`: the runner writes the script
   * reference into `slot`, so the caller builds one array per call and the fast path copies none.
   */
  run(client: Redis, args: (string | number)[]): Promise<unknown> {
    args[0] = this.sha;
    return client.call('EVALSHA', args).then(undefined, (err: unknown) => {
      if (!isNoScriptError(err)) throw err;
      args[0] = this.source;
      return client.call('EVAL', args);
    });
  }
}

/** The script of a plan with these tiers. */
export function decideScript(limits: readonly GcraLimits[]): LuaScript {
  return new LuaScript(decideSource(limits));
}

/** The zero-tier script: reads the clock, writes nothing (the failover probe). */
export const probeScript = decideScript([]);
