/**
 * Value parsers for settings. Each parser turns an environment string into a typed value and
 * checks a typed value given programmatically; both paths share one `check`, so the environment
 * and code agree on what is valid. A parser throws `ParseFailure` with nothing but the reason;
 * the caller adds the variable name and the value.
 */

/** Raised by a parser; the caller turns it into a `SettingsIssue`. */
export class ParseFailure extends Error {}

/** A parser for one kind of value. */
export interface Parser<T> {
  /** What is accepted, in words, for error messages and the README table. */
  readonly accepted: string;
  /** Parse an environment string. */
  parse(raw: string): T;
  /** Check an already-typed value (from `parseSettings`); throws `ParseFailure`. */
  check(value: unknown): T;
}

function fail(): never {
  throw new ParseFailure();
}

/** An integer within `[min, max]`. */
export function int(opts: { min?: number; max?: number } = {}): Parser<number> {
  const min = opts.min ?? Number.MIN_SAFE_INTEGER;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  const accepted =
    opts.max !== undefined
      ? `an integer from ${min} to ${max}`
      : opts.min !== undefined
        ? `an integer >= ${min}`
        : 'an integer';
  const check = (v: unknown): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail();
    return v;
  };
  return {
    accepted,
    check,
    parse: (raw) => {
      const s = raw.trim();
      if (!/^[+-]?\d+$/.test(s)) fail();
      return check(Number(s));
    },
  };
}

/** A finite number; `exclusiveMin` makes the lower bound strict (e.g. a multiplier > 0). */
export function num(opts: { min?: number; max?: number; exclusiveMin?: boolean } = {}): Parser<number> {
  const { min, max, exclusiveMin } = opts;
  const parts: string[] = [];
  if (min !== undefined) parts.push(`${exclusiveMin ? '>' : '>='} ${min}`);
  if (max !== undefined) parts.push(`<= ${max}`);
  const accepted = parts.length ? `a number ${parts.join(' and ')}` : 'a number';
  const check = (v: unknown): number => {
    if (typeof v !== 'number' || !Number.isFinite(v)) fail();
    if (min !== undefined && (exclusiveMin ? v <= min : v < min)) fail();
    if (max !== undefined && v > max) fail();
    return v;
  };
  return {
    accepted,
    check,
    parse: (raw) => {
      const s = raw.trim();
      if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s)) fail();
      return check(Number(s));
    },
  };
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/** A boolean: true/false/1/0/yes/no/on/off, any case. */
export function bool(): Parser<boolean> {
  return {
    accepted: 'true/false, 1/0, yes/no or on/off',
    check: (v) => (typeof v === 'boolean' ? v : fail()),
    parse: (raw) => {
      const s = raw.trim().toLowerCase();
      if (TRUE.has(s)) return true;
      if (FALSE.has(s)) return false;
      return fail();
    },
  };
}

/** A non-empty string, optionally matching a pattern. */
export function str(opts: { pattern?: RegExp; accepted?: string } = {}): Parser<string> {
  const check = (v: unknown): string => {
    if (typeof v !== 'string' || v.length === 0) fail();
    if (opts.pattern && !opts.pattern.test(v)) fail();
    return v;
  };
  return { accepted: opts.accepted ?? 'a non-empty string', check, parse: (raw) => check(raw.trim()) };
}

/** One of a fixed set of words (case-insensitive on input). */
export function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  const check = (v: unknown): T =>
    typeof v === 'string' && (values as readonly string[]).includes(v) ? (v as T) : fail();
  return { accepted: `one of ${values.join(', ')}`, check, parse: (raw) => check(raw.trim().toLowerCase()) };
}

/** A URL whose scheme is one of `protocols` (without the colon). */
export function url(protocols: readonly string[]): Parser<string> {
  const check = (v: unknown): string => {
    if (typeof v !== 'string') fail();
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      return fail();
    }
    if (!protocols.includes(u.protocol.replace(/:$/, '')) || !u.hostname) fail();
    return v;
  };
  return {
    accepted: `a URL of the form ${protocols.map((p) => `${p}://host[:port]`).join(' or ')}`,
    check,
    parse: (raw) => check(raw.trim()),
  };
}

/** A comma-separated list of items, each checked by `item`; empty entries are dropped. */
export function list<T>(item: Parser<T>, opts: { minItems?: number } = {}): Parser<T[]> {
  const minItems = opts.minItems ?? 0;
  const check = (v: unknown): T[] => {
    if (!Array.isArray(v) || v.length < minItems) fail();
    return v.map((x) => item.check(x));
  };
  return {
    accepted: `a comma-separated list${minItems ? ` of at least ${minItems} item(s)` : ''}, each ${item.accepted}`,
    check,
    parse: (raw) => {
      const parts = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      if (parts.length < minItems) fail();
      return parts.map((p) => item.parse(p));
    },
  };
}

/** A URL path prefix: starts with `/`, no query, no trailing slash (except `/` itself). */
export function pathPrefix(): Parser<string> {
  return str({
    pattern: /^\/(?:[A-Za-z0-9._~!$&'()*+,;=:@%-]+(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*)?$/,
    accepted: 'a path starting with / and without a trailing slash',
  });
}

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** An HTTP method name, upper-cased. */
export function httpMethod(): Parser<string> {
  const check = (v: unknown): string =>
    typeof v === 'string' && (HTTP_METHODS as readonly string[]).includes(v) ? v : fail();
  return {
    accepted: `an HTTP method (${HTTP_METHODS.join(', ')})`,
    check,
    parse: (raw) => check(raw.trim().toUpperCase()),
  };
}

const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

/** A Prometheus/Alertmanager duration such as `15s`, `5m`, `1h30m`. Kept as the string. */
export function duration(): Parser<string> {
  return str({ pattern: DURATION, accepted: 'a duration such as 15s, 5m, 1h or 1h30m' });
}

/** Milliseconds in a Prometheus-style duration string. */
export function durationMs(d: string): number {
  const units: Record<string, number> = {
    ms: 1,
    s: 1000,
    m: 60000,
    h: 3600000,
    d: 86400000,
    w: 604800000,
    y: 31536000000,
  };
  let total = 0;
  for (const m of d.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) total += Number(m[1]) * units[m[2]];
  return total;
}

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** A byte size: a number of bytes or with a unit (`512kb`, `10mb`, `1gb`, binary multiples). */
export function size(opts: { min?: number; max?: number } = {}): Parser<number> {
  const min = opts.min ?? 1;
  const max = opts.max ?? 1024 ** 3;
  const check = (v: unknown): number =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : fail();
  return {
    accepted: `a size in bytes or with a unit (e.g. 512kb, 10mb), from ${min} bytes to ${max / 1024 ** 2}mb`,
    check,
    parse: (raw) => {
      const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
      if (!m) fail();
      return check(Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]));
    },
  };
}

/** An e-mail address (loose check: something@domain). */
export function email(): Parser<string> {
  return str({ pattern: /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/, accepted: 'an e-mail address such as ops@example.com' });
}
