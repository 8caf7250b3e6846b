/**
 * The wait a `Retry-After` header asks for, milliseconds: delay-seconds (`120`, also `1.5`) or an
 * HTTP date, measured from `now` (ms since the epoch; a date in the past is no wait). Undefined
 * when there is no header or it is neither.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
