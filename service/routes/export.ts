import { Router } from 'express';
import { EXPORTS, exportChunks } from '../content/export';
import { exportParams } from '../http/contract/export';
import { validate } from '../http/contract/validate';
import { HttpError } from '../http/errors';
import { writeChunks } from '../http/write-chunks';
import type { FeatureContext } from './context';
import { HTTP_ROUTES } from '../../contract';

const NAMES = [...EXPORTS.keys()].join(', ');

/**
 * Longest an export waits for a client that reads nothing, ms; then the connection is closed. A
 * download that a person is watching never pauses this long; a client that opens exports and
 * stops reading must not hold connections and socket buffers forever.
 */
export const EXPORT_STALL_MS = 60_000;

/**
 * `GET /api/export/<name>`: one of `EXPORTS` (articles/projects/experiences/all as `.json` or
 * `.ndjson`, and `all.md`), served as an attachment. The name is only ever a key of that list:
 * path-like names get 400, other unknown names 404, and no file is ever read. The body is
 * streamed (`exportChunks` through `writeChunks`): bounded memory and event-loop slices whatever
 * the corpus size, with backpressure; sent chunked, so without Content-Length or ETag.
 *
 * Routes are added to `r` (createFeatures passes one router for every group, so a request walks one).
 */
export function exportRouter(ctx: FeatureContext, r: Router = Router()): Router {
  const logger = ctx.deps.logger.child({ component: 'export' });
  r.get(HTTP_ROUTES.export.path, async (req, res) => {
    const { name } = validate(exportParams, req.params, { code: 'invalid_export_name' });
    const spec = EXPORTS.get(name);
    if (!spec) throw new HttpError(404, 'not_found', `no export named "${name}"; available: ${NAMES}`);
    res.set('Content-Type', spec.contentType);
    res.set('Content-Disposition', `attachment; filename="${spec.name}"`);
    res.set('X-Content-Type-Options', 'nosniff');
    // HEAD: the same headers, no body, and no work producing one (not even the listing).
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    // The in-memory copy's sorted list as it is now: a write during the export does not change it (the
    // in-memory copy builds a new list), so the export is one consistent snapshot.
    await ctx.content.prepareListing(spec.scope);
    const items = ctx.content.all(spec.scope);
    try {
      const r = await writeChunks(res, exportChunks(spec, items), { stallMs: EXPORT_STALL_MS });
      if (r.outcome === 'client_gone') {
        logger.info(
          { export: spec.name, items: items.length, chunks: r.chunks, chars: r.chars },
          'export stopped: the client closed the connection',
        );
      } else if (r.outcome === 'stalled') {
        logger.warn(
          { export: spec.name, items: items.length, chunks: r.chunks, chars: r.chars, stall_ms: EXPORT_STALL_MS },
          'export stopped: the client read nothing for too long; connection closed',
        );
      }
    } catch (err) {
      if (!res.headersSent) {
        // Nothing sent yet: a normal JSON error, without the attachment's headers.
        res.removeHeader('Content-Type');
        res.removeHeader('Content-Disposition');
        throw err;
      }
      // Part of the body is out: the connection was destroyed (the client sees an aborted transfer).
      logger.error(
        { err, export: spec.name },
        'export failed mid-stream; connection closed so the client sees an incomplete download',
      );
    }
  });
  // Several segments (an absolute or relative path after /api/export/): never a file.
  r.get(HTTP_ROUTES.exportPath.path, () => {
    throw new HttpError(400, 'invalid_export_name', `an export is named, not a path; available: ${NAMES}`, {
      field: 'name',
    });
  });
  r.get(HTTP_ROUTES.exportIndex.path, () => {
    throw new HttpError(404, 'not_found', `name an export: ${HTTP_ROUTES.exportIndex.path}/<name>, one of ${NAMES}`);
  });
  return r;
}
