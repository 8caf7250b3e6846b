import { z } from 'zod';
import { EXPORTS } from '../../content/export';

const NAMES = [...EXPORTS.keys()];

/** A name that tries to leave the export list: separators, dot-segments, NUL. */
function looksLikePath(name: string): boolean {
  return /[/\\\0]/.test(name) || name.includes('..') || /^[A-Za-z]:/.test(name);
}

/**
 * The path parameter of `GET /api/export/{name}`: a name, never a path (path-like names are a
 * 400 `invalid_export_name`; other unknown names a 404, decided by the route).
 */
export const exportParams = z.object({
  name: z
    .string()
    .refine((n) => !looksLikePath(n), { error: `an export is named, not a path; available: ${NAMES.join(', ')}` })
    .meta({ description: `One of ${NAMES.join(', ')}.`, example: 'all.json' }),
});

/** The documented names. */
export const exportNameDoc = z.enum(NAMES as [string, ...string[]]).meta({ example: 'all.json' });
