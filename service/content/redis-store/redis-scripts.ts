import { createHash } from 'node:crypto';
import type { RedisClient } from '../../kvstore/client-factory';
import type { ContentKeys } from './redis-keys';

/**
 * The content store's Lua scripts (each one atomic step on the content keys, all in one hash slot
 * on a Cluster: redis-keys.ts), run by `runScript` as EVALSHA with EVAL after NOSCRIPT.
 *
 * **Tombstones.** A deletion leaves a tombstone: `<prefix>:deleted` (sorted set) id → the deletion's
 * stamp in ms, the deleting replica's clock, raised to the deleted version's `updated_at` when that
 * is later (so the tombstone is never older than what it deleted, whatever the clocks). A write
 * of the id removes its tombstone and notes in `<prefix>:revived` (id → the stamp it superseded)
 * that the deletion was undone by a newer write, so a deletion written back later by a replica
 * that remembered it is known as superseded without comparing clocks.
 *
 * - `write`: the puts and the deletes of one write and its change notice.
 * - `restore`: writes back a lost item only where the id is absent and no tombstone at least as
 *   new as the item's `updated_at` exists (a write-back never resurrects a deleted item).
 * - `writeVectors`: an item version's vectors, only while the item is at that version (issue 41).
 * - `restoreDeletions`: writes back tombstones a replica remembers (after Redis lost them), unless
 *   Redis holds that deletion or a newer one, or a write that superseded it; an item at most as
 *   new as the tombstone is deleted with it.
 */

/** Redis < 7 replicates scripts verbatim unless told to replicate effects; 7+ always does. */
const PREAMBLE = `if not redis.REDIS_VERSION_NUM and redis.replicate_commands then redis.replicate_commands() end
local items, deleted, revived, changes, vectors = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- The updated_at of a stored record in ms (days from civil, proleptic Gregorian), or nil. Only a
-- top-level key matches: inside a JSON string every quote is escaped.
local function updated_ms(rec)
  local y, mo, d, h, mi, s, f = string.match(rec, '"updated_at":"(%d%d%d%d)%-(%d%d)%-(%d%d)T(%d%d):(%d%d):(%d%d)%.?(%d*)Z"')
  if not y then return nil end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  if mo <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((mo + 9) % 12) + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  local days = era * 146097 + doe - 719468
  local ms = 0
  if f ~= '' then ms = tonumber(string.sub(f .. '00', 1, 3)) end
  return (((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60 + tonumber(s)) * 1000 + ms
end
local function notice(fields)
  return redis.call('XADD', changes, 'MAXLEN', '~', ARGV[1], '*', unpack(fields))
end
`;

/**
 * KEYS items, deleted, revived, changes. ARGV: stream max length, origin, write token, now (ms),
 * compaction cutoff (ms; '' for none), number of puts, then each put's id and record, then the
 * deleted ids. Reply: the stamp of each deleted id, in order.
 *
 * Tombstones (and revivals) older than the cutoff are removed, at most 1,000 of each per call.
 */
const WRITE = `${PREAMBLE}
local now = tonumber(ARGV[4])
local nputs = tonumber(ARGV[6])
local ids = {}
local first = 7
local last_put = first + 2 * nputs - 1
for a = first, last_put, 2 do
  local id = ARGV[a]
  redis.call('HSET', items, id, ARGV[a + 1])
  local t = redis.call('ZSCORE', deleted, id)
  if t then
    redis.call('ZREM', deleted, id)
    redis.call('ZADD', revived, t, id)
  end
  ids[#ids + 1] = id
end
local stamps = {}
local dels = {}
local ndel = 0
for a = last_put + 1, #ARGV do
  local id = ARGV[a]
  local s = now
  local old = redis.call('HGET', items, id)
  if old then
    local u = updated_ms(old)
    if u and u > s then s = u end
    redis.call('HDEL', items, id)
  end
  redis.call('HDEL', vectors, id)
  local t = tonumber(redis.call('ZSCORE', deleted, id))
  if t and t >= s then s = t else redis.call('ZADD', deleted, s, id) end
  ids[#ids + 1] = id
  stamps[#stamps + 1] = s
  dels[id] = s
  ndel = ndel + 1
end
if ARGV[5] ~= '' then
  for _, key in ipairs({ deleted, revived }) do
    local old = redis.call('ZRANGEBYSCORE', key, '-inf', '(' .. ARGV[5], 'LIMIT', 0, 1000)
    if #old > 0 then redis.call('ZREM', key, unpack(old)) end
  end
end
local fields = { 'ids', cjson.encode(ids), 'origin', ARGV[2], 'write', ARGV[3] }
if ndel > 0 then
  fields[#fields + 1] = 'deleted'
  fields[#fields + 1] = cjson.encode(dels)
end
notice(fields)
return stamps
`;

/**
 * KEYS items, deleted, revived, changes. ARGV: stream max length, origin, then per item its id,
 * `updated_at` in ms and record. Reply per item: 1 written, 0 present already (left as it is),
 * -1 deleted (a tombstone at least as new as the item). One notice names the written ids.
 */
const RESTORE = `${PREAMBLE}
local codes = {}
local written = {}
for a = 3, #ARGV, 3 do
  local id = ARGV[a]
  local code = 0
  if redis.call('HEXISTS', items, id) == 0 then
    local t = tonumber(redis.call('ZSCORE', deleted, id))
    if t and tonumber(ARGV[a + 1]) <= t then
      code = -1
    else
      redis.call('HSET', items, id, ARGV[a + 2])
      if t then
        redis.call('ZREM', deleted, id)
        redis.call('ZADD', revived, t, id)
      end
      code = 1
      written[#written + 1] = id
    end
  end
  codes[#codes + 1] = code
end
if #written > 0 then notice({ 'ids', cjson.encode(written), 'origin', ARGV[2], 'kind', 'restore' }) end
return codes
`;

/**
 * KEYS items, deleted, revived, changes. ARGV: stream max length, origin, then per deletion its id
 * and stamp (ms). Reply: [tombstones written, ids of the items deleted with them]. One notice
 * (kind `restore-deletions`) names the deleted items with their stamps.
 */
const RESTORE_DELETIONS = `${PREAMBLE}
local added = 0
local removed = {}
local dels = {}
for a = 3, #ARGV, 2 do
  local id = ARGV[a]
  local s = tonumber(ARGV[a + 1])
  local t = tonumber(redis.call('ZSCORE', deleted, id))
  local r = tonumber(redis.call('ZSCORE', revived, id))
  if not ((t and t >= s) or (r and r >= s)) then
    local old = redis.call('HGET', items, id)
    local u = old and updated_ms(old)
    if not old or (u and u <= s) then
      if old then
        redis.call('HDEL', items, id)
        redis.call('HDEL', vectors, id)
        removed[#removed + 1] = id
        dels[id] = s
      end
      redis.call('ZADD', deleted, s, id)
      added = added + 1
    end
  end
end
if #removed > 0 then
  notice({ 'ids', cjson.encode(removed), 'origin', ARGV[2], 'kind', 'restore-deletions', 'deleted', cjson.encode(dels) })
end
return { added, removed }
`;

/**
 * KEYS items, deleted, revived, changes, vectors. ARGV: stream max length, origin, then per record
 * its id, the item's `updated_at` it was computed from, and the record. A record is written only
 * while the stored item has that `updated_at` (a slow embedding of an older version never
 * replaces the vectors of a newer one). Reply: the ids written; one notice (`vectors`) names them.
 */
const WRITE_VECTORS = `${PREAMBLE}
local written = {}
for a = 3, #ARGV, 3 do
  local id = ARGV[a]
  local rec = redis.call('HGET', items, id)
  if rec and string.find(rec, '"updated_at":"' .. ARGV[a + 1] .. '"', 1, true) then
    redis.call('HSET', vectors, id, ARGV[a + 2])
    written[#written + 1] = id
  end
end
if #written > 0 then notice({ 'ids', '[]', 'origin', ARGV[2], 'vectors', cjson.encode(written) }) end
return written
`;

/** A Lua script known by its SHA1 (what EVALSHA sends). */
export interface ContentScript {
  readonly source: string;
  readonly sha: string;
}

function script(source: string): ContentScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** The content store's scripts (see the module comment). */
export const CONTENT_SCRIPTS = {
  write: script(WRITE),
  restore: script(RESTORE),
  restoreDeletions: script(RESTORE_DELETIONS),
  writeVectors: script(WRITE_VECTORS),
} as const;

/** True for Redis's "script not in cache" reply (a restart, a failover, SCRIPT FLUSH): the script did not run. */
function isNoScript(e: unknown): boolean {
  return e instanceof Error && /^NOSCRIPT(?:\s|$)/.test(e.message);
}

/** The five content keys every script takes, in its order. */
export function scriptKeys(keys: ContentKeys): string[] {
  return [keys.items, keys.deleted, keys.revived, keys.changes, keys.vectors];
}

/**
 * Runs `s` on `c` with `keys` and `args`: EVALSHA, and once EVAL when Redis answers NOSCRIPT (the
 * script did not run then, so sending it again is safe; EVAL caches it for the next call).
 */
export async function runScript(
  c: RedisClient,
  s: ContentScript,
  keys: readonly string[],
  args: readonly (string | number | Buffer)[],
): Promise<unknown> {
  try {
    return await c.call('EVALSHA', s.sha, keys.length, ...keys, ...args);
  } catch (e) {
    if (!isNoScript(e)) throw e;
    return c.call('EVAL', s.source, keys.length, ...keys, ...args);
  }
}
