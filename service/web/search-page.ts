import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';
import { demoDocuments, projectRoot } from '../demo/demo-content';

/** Content Security Policy of the page: own scripts and styles only, no inline script, no framing. */
export const SEARCH_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/ui/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  // Declared by the page; also at /favicon.ico, which browsers ask for on the plain-text documents.
  '/ui/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
  '/favicon.ico': { file: 'favicon.svg', type: 'image/svg+xml' },
};

/**
 * Serves the search page at `/` and its script and style under `/ui/`, and the demo's documents
 * at their own paths. The files live in
 * service/web/assets (tsc does not copy them; found from the project root at run time) and are
 * read once here.
 */
export function searchPageRouter(
  assetsDir: string = join(projectRoot(), 'service', 'web', 'assets'),
  root: string = projectRoot(),
): Router {
  const router = Router();
  // The demo articles link to their sections (`/docs/rate-limiting.md#…`): those documents are
  // served as plain text, so a source link in the results or the chat opens what it cites.
  for (const file of demoDocuments(root)) {
    const body = readFileSync(join(root, file));
    router.get(`/${file}`, (_req, res) => {
      res.set({
        'Content-Type': 'text/plain; charset=utf-8',
        'Content-Security-Policy': SEARCH_PAGE_CSP,
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-cache',
      });
      res.send(body);
    });
  }
  for (const [path, asset] of Object.entries(ASSETS)) {
    const body = readFileSync(join(assetsDir, asset.file));
    router.get(path, (_req, res) => {
      res.set({
        'Content-Type': asset.type,
        'Content-Security-Policy': SEARCH_PAGE_CSP,
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-cache',
      });
      res.send(body);
    });
  }
  return router;
}
