import { z } from 'zod';

/**
 * An integer parameter from a query string (`"7"`) or a JSON body (`7` or `"7"`): digits with
 * optional surrounding spaces are read as the number, an empty value is absent (the default),
 * anything else fails the integer check with `message`, naming the field.
 */
export function intParam(min: number, max: number, dflt: number, message: string) {
  return z.preprocess(
    (v) => (v === '' ? undefined : typeof v === 'string' && /^\s*\d{1,15}\s*$/.test(v) ? Number(v) : v),
    z.int({ error: message }).min(min, { error: message }).max(max, { error: message }).default(dflt),
  );
}

/**
 * A query parameter given once, as a string: Express reads a repeated `?tag=a&tag=b` as an array
 * and `?tag[x]=1` as an object, both refused.
 */
export function onceParam(name: string) {
  return z.string({
    error: (i) =>
      i.input === undefined ? `${name} is required` : `query parameter ${name} must be given once, as a string`,
  });
}
