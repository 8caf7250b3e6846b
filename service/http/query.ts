import type { Request } from 'express';
import { badRequest } from './errors';

/** A query parameter as one string; repeated parameters are refused. */
export function queryString(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(`query parameter ${name} must be given once, as a string`, { field: name });
  return v;
}

/** An integer query parameter within [min, max], or the default. */
export function queryInt(req: Request, name: string, opts: { min: number; max: number; default: number }): number {
  const raw = queryString(req, name);
  if (raw === undefined || raw.trim() === '') return opts.default;
  if (!/^\d+$/.test(raw.trim())) throw badRequest(`${name} must be an integer from ${opts.min} to ${opts.max}`, { field: name });
  const n = Number(raw.trim());
  if (n < opts.min || n > opts.max) throw badRequest(`${name} must be an integer from ${opts.min} to ${opts.max}`, { field: name });
  return n;
}
