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

/**
 * A list parameter: repeated in a query string (`?type=article&type=project`, which Express reads
 * as an array), or an array in a JSON body; with `comma`, a value may also be a comma list
 * (`facets=type,tag`). Values are trimmed, empty ones dropped, and an empty list is absent. Each
 * value must pass `item`, else the whole parameter fails with `message` (so the 400 names the
 * parameter, not one of its positions).
 */
export function listParam<T extends z.ZodType<string, string>>(
  item: T,
  opts: { readonly max: number; readonly message: string; readonly comma?: boolean },
) {
  return z.preprocess(
    (v) => {
      if (v === undefined || v === null) return undefined;
      const xs: unknown[] = Array.isArray(v) ? v : [v];
      // Anything but strings fails the list as a whole (0 is not an array), naming the parameter.
      if (!xs.every((x) => typeof x === 'string')) return 0;
      const values = (xs as string[])
        .flatMap((x) => (opts.comma ? x.split(',') : [x]))
        .map((x) => x.trim())
        .filter((x) => x !== '');
      return values.length ? values : undefined;
    },
    // One value or a list of them (the preprocess makes every value a list); the document
    // describes each value as `item` does, and the check below is what enforces it.
    z
      .union(
        [
          z.string().meta(jsonItems(item)),
          z
            .array(z.string())
            .max(opts.max)
            .meta({ items: jsonItems(item) }),
        ],
        { error: opts.message },
      )
      .transform((v, ctx) => {
        const xs = typeof v === 'string' ? [v] : v;
        if (xs.every((x) => item.safeParse(x).success)) return xs.map((x) => item.parse(x) as z.output<T>);
        ctx.addIssue({ code: 'custom', message: opts.message });
        return z.NEVER;
      })
      .optional(),
  );
}

/** `item`'s JSON Schema, for a list's `items`. */
function jsonItems(item: z.ZodType): Record<string, unknown> {
  const schema: Record<string, unknown> = { ...z.toJSONSchema(item, { io: 'input' }) };
  delete schema.$schema;
  return schema;
}

/** A `YYYY-MM-DD` bound of the date filter (inclusive; zod's ISO date: a real calendar day); empty is absent. */
export const dayParam = (name: string, what: string) =>
  z
    .preprocess(
      (v) => (v === '' ? undefined : v),
      z.iso
        .date({
          error: (i) =>
            Array.isArray(i.input)
              ? `${name} must be a calendar date YYYY-MM-DD, given once`
              : `${name} must be a calendar date YYYY-MM-DD`,
        })
        .optional(),
    )
    .meta({ description: what, example: '2024-01-31' });
