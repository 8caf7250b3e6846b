import { LuaScript } from './script';

/**
 * Gives back one request's charge on each key (Redis Cluster: a client admitted by its own tiers
 * and then refused by the global tier). KEYS: the client's keys (one slot); ARGV[i]: the charge of
 * KEYS[i] in GCRA units (the tier's `windowMs`). A key's stored debt is as of its stamp, so taking
 * the charge off that debt is exact; it never goes below 0, and the expiry is kept (a longer one
 * than needed only keeps an empty bucket a little longer).
 */
export const refundSource = `
for i = 1, #KEYS do
  local value = redis.call('GET', KEYS[i])
  if value then
    local space = string.find(value, ' ', 1, true)
    local t = string.sub(value, 1, space - 1)
    local debt = tonumber(string.sub(value, space + 1)) - tonumber(ARGV[i])
    if debt < 0 then debt = 0 end
    redis.call('SET', KEYS[i], t .. ' ' .. string.format('%.0f', debt), 'KEEPTTL')
  end
end
return 1
`.trim();

/** The refund script. */
export const refundScript = new LuaScript(refundSource);
