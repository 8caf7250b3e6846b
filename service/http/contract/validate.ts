import type { z } from 'zod';
import { HttpError } from '../errors';

/**
 * The one way a route validates its input: `schema` parses `value` (a query, path parameters, a
 * JSON body, multipart fields); the first problem is a 400 `{error: "bad_request", message,
 * field}` naming the field (dotted path, `body` for the body as a whole); `code` replaces
 * `bad_request` where a route has its own.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  opts: { whole?: string; code?: string } = {},
): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  // An unknown key of a strict object is named itself (`delete_where.colour`), not its object.
  const path = issue.code === 'unrecognized_keys' && issue.keys.length ? [...issue.path, issue.keys[0]] : issue.path;
  const field = path.length ? path.map(String).join('.') : (opts.whole ?? 'body');
  // Messages that start with the field's name say it already ("q is required …").
  const message = !path.length || issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`;
  throw new HttpError(400, opts.code ?? 'bad_request', message, { field });
}
