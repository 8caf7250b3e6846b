import { Router } from 'express';
import { EXPORTS, renderExport } from '../content/export';
import { HttpError } from '../http/errors';
import type { FeatureContext } from './context';

const NAMES = [...EXPORTS.keys()].join(', ');

/** A name that tries to leave the export list: separators, dot-segments, NUL. */
function looksLikePath(name: string): boolean {
  return /[/\\\0]/.test(name) || name.includes('..') || /^[A-Za-z]:/.test(name);
}

/**
 * `GET /api/export/<name>`: one of `EXPORTS` (articles/projects/experiences/all as `.json` or
 * `.ndjson`, and `all.md`), served as an attachment. The name is only ever a key of that list:
 * path-like names get 400, other unknown names 404, and no file is ever read.
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function exportRouter(ctx: FeatureContext, r: Router = Router()): Router {
  r.get('/api/export/:name', (req, res) => {
    const name = req.params.name;
    if (looksLikePath(name)) {
      throw new HttpError(400, 'invalid_export_name', `an export is named, not a path; available: ${NAMES}`, { field: 'name' });
    }
    const spec = EXPORTS.get(name);
    if (!spec) throw new HttpError(404, 'not_found', `no export named "${name}"; available: ${NAMES}`);
    const body = renderExport(spec, ctx.content.all(spec.scope));
    res.set('Content-Type', spec.contentType);
    res.set('Content-Disposition', `attachment; filename="${spec.name}"`);
    res.set('X-Content-Type-Options', 'nosniff');
    res.send(body);
  });
  // Several segments (an absolute or relative path after /api/export/): never a file.
  r.get('/api/export/*rest', () => {
    throw new HttpError(400, 'invalid_export_name', `an export is named, not a path; available: ${NAMES}`, { field: 'name' });
  });
  r.get('/api/export', () => {
    throw new HttpError(404, 'not_found', `name an export: /api/export/<name>, one of ${NAMES}`);
  });
  return r;
}
