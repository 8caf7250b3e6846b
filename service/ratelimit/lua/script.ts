import { createHash } from 'node:crypto';
import type { GcraLimits } from '../gcra';

/**
 * The source of the script that decides a batch of requests of one tier plan, each in one atomic
 * step: the GCRA of gcra.ts, line by line. One script per tier plan: the plan's limits are
 * constants in the source (they are fixed for the life of the process), so a call carries only
 * keys, key references and the clock.
 *
 * KEYS         the distinct keys of the batch's requests (one request's keys: global, ip, then the
 *              endpoint tier; the global key is shared by all).
 * ARGV[1]      "now" in ms, or "" to read Redis `TIME` (the default: replicas share one clock).
 * ARGV[2...]   one group of `#LIMITS` numbers per request: the KEYS index of its key of each tier.
 *
 * The requests are decided one after another in ARGV order, exactly as if each were sent alone at
 * the same `now`: each reads every tier, and consumes from all of them only when all admit (a
 * refused request consumes nothing anywhere). Each distinct key is read once (one MGET) and, if
 * any request of the batch consumed from it, written once at the end, as "<t> <debt>" with a PX
 * expiry at the moment its bucket is full again, so idle keys vanish on their own. The whole
 * script is atomic, which each request's decision needs and a batch does not weaken.
 *
 * Reply: { now, then per request: allowed (1|0), debt_1, ..., debt_n }, every debt as of `now`
 * after that request's decision. With no keys it only reads the clock (the probe).
 *
 * A call of one request with distinct keys (the usual case: a request alone in its event-loop
 * turn) takes a path unrolled for the plan's tiers, with its limits written in as numbers: the
 * same arithmetic in the same order, without the batch path's tables and loops (measured with
 * bench/ratelimit/script-cpu.ts: see BENCHMARKS.md).
 */
export function decideSource(limits: readonly GcraLimits[]): string {
  const table = limits.map((g) => `{ ${g.limit}, ${g.windowMs}, ${g.burst} }`).join(', ');
  return `
-- limit (requests per window), window (ms) and burst of each tier, in the order of a request's keys
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
local n = #LIMITS
${singleRequestPath(limits)}local reply = { now }
if n == 0 or #KEYS == 0 then return reply end
local values = redis.call('MGET', unpack(KEYS))
-- per key index: its debt drained to now (on first use), its stamp, and its tier once consumed from
local debts = {}
local stamps = {}
local written = {}
local used = {}
local r = 1
for a = 2, #ARGV, n do
  local allowed = 1
  for i = 1, n do
    local k = tonumber(ARGV[a + i - 1])
    used[i] = k
    local debt = debts[k]
    if debt == nil then
      debt = 0
      local stamp = now
      local value = values[k]
      if value then
        local space = string.find(value, ' ', 1, true)
        local t = tonumber(string.sub(value, 1, space - 1))
        debt = tonumber(string.sub(value, space + 1))
        if now > t then
          debt = debt - (now - t) * LIMITS[i][1]
          if debt < 0 then debt = 0 end
        else
          stamp = t
        end
      end
      debts[k] = debt
      stamps[k] = stamp
    end
    if debt + LIMITS[i][2] > LIMITS[i][3] * LIMITS[i][2] then allowed = 0 end
  end
  reply[r + 1] = allowed
  for i = 1, n do
    local k = used[i]
    if allowed == 1 then
      debts[k] = debts[k] + LIMITS[i][2]
      written[k] = i
    end
    reply[r + 1 + i] = debts[k]
  end
  r = r + n + 1
end
for k, i in pairs(written) do
  local debt = debts[k]
  local stamp = stamps[k]
  -- Integers below 10^14 print exactly with tostring's %.14g, far cheaper than string.format.
  local value
  if stamp < 1e14 and debt < 1e14 then value = stamp .. ' ' .. debt else value = string.format('%.0f %.0f', stamp, debt) end
  redis.call('SET', KEYS[k], value, 'PX', math.ceil(debt / LIMITS[i][1]))
end
return reply
`.trim();
}

/**
 * The one-request path of `decideSource`: taken when ARGV holds one request's references and
 * KEYS as many distinct keys as tiers. Line for line the batch path below for a batch of one
 * (drain each tier's debt to now, admit when every tier has room, then add a window to each and
 * write each key), with `LIMITS[i][1..3]` written in as literals. Empty for a plan without tiers.
 */
function singleRequestPath(limits: readonly GcraLimits[]): string {
  const n = limits.length;
  if (n === 0) return '';
  const tiers = limits.map((g, j) => ({ i: j + 1, rate: g.limit, window: g.windowMs, burst: g.burst }));
  const lines: string[] = [`if #ARGV == ${n + 1} and #KEYS == ${n} then`];
  for (const t of tiers) lines.push(`  local k${t.i} = tonumber(ARGV[${t.i + 1}])`);
  lines.push(`  local v = redis.call('MGET', ${tiers.map((t) => `KEYS[k${t.i}]`).join(', ')})`);
  for (const t of tiers) {
    lines.push(
      `  local d${t.i}, s${t.i} = 0, now`,
      `  local v${t.i} = v[${t.i}]`,
      `  if v${t.i} then`,
      `    local space = string.find(v${t.i}, ' ', 1, true)`,
      `    local t = tonumber(string.sub(v${t.i}, 1, space - 1))`,
      `    d${t.i} = tonumber(string.sub(v${t.i}, space + 1))`,
      `    if now > t then`,
      `      d${t.i} = d${t.i} - (now - t) * ${t.rate}`,
      `      if d${t.i} < 0 then d${t.i} = 0 end`,
      `    else`,
      `      s${t.i} = t`,
      `    end`,
      `  end`,
    );
  }
  const room = tiers.map((t) => `d${t.i} + ${t.window} > ${t.burst} * ${t.window}`).join(' or ');
  lines.push(`  if ${room} then return { now, 0, ${tiers.map((t) => `d${t.i}`).join(', ')} } end`);
  for (const t of tiers) {
    lines.push(
      `  d${t.i} = d${t.i} + ${t.window}`,
      `  if s${t.i} < 1e14 and d${t.i} < 1e14 then v${t.i} = s${t.i} .. ' ' .. d${t.i} else v${t.i} = string.format('%.0f %.0f', s${t.i}, d${t.i}) end`,
      `  redis.call('SET', KEYS[k${t.i}], v${t.i}, 'PX', math.ceil(d${t.i} / ${t.rate}))`,
    );
  }
  lines.push(`  return { now, 1, ${tiers.map((t) => `d${t.i}`).join(', ')} }`, 'end', '');
  return lines.join('\n');
}

/**
 * A Lua script known by its SHA1 (what `EVALSHA` sends). It is run by the decision stores'
 * script runner (../script-runner.ts), which falls back to `EVAL` when Redis answers NOSCRIPT.
 */
export class LuaScript {
  /** SHA1 of the source, as Redis computes it. */
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }
}

/** The script of a plan with these tiers. */
export function decideScript(limits: readonly GcraLimits[]): LuaScript {
  return new LuaScript(decideSource(limits));
}

/** The zero-tier script: reads the clock, writes nothing (the failover probe). */
export const probeScript = decideScript([]);
