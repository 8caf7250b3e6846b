import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { API_PREFIX, CONTENT_COLLECTIONS, HTTP_ROUTES, type HttpRoute, type RouteId } from '../../contract';
import { OPERATIONS, openApiPath } from '../../service/http/contract/routes';

const ROOT = join(__dirname, '..', '..');

/** The product's folders and root files (docs/architecture.md), but the contract that holds the route table. */
const PRODUCT = ['configs', 'service', 'charts', 'imports', 'app', 'bin', 'index.ts'];

/** Every `.ts` file under `path` (a folder or a file), repository-relative. */
function tsFiles(path: string): string[] {
  const abs = join(ROOT, path);
  if (!statSync(abs).isDirectory()) return path.endsWith('.ts') ? [path] : [];
  return readdirSync(abs).flatMap((name) => (name === 'node_modules' ? [] : tsFiles(join(path, name))));
}

/**
 * The string and template-literal texts of a source that spell an `/api/` path (or `/api` itself),
 * as `line: text`. Comments are not code: a doc comment may name the path it describes.
 */
function apiPathLiterals(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteralLike(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      if (/\/api(\/|$)/i.test(node.text))
        found.push(`${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.text}`);
    }
    node.forEachChild(visit);
  };
  visit(file);
  return found;
}

describe('the route table is the one spelling of the API paths', () => {
  it('finds a path in strings and templates, not in comments (the scan bites)', () => {
    const source = [
      '/** `GET /api/search` answers a query. */',
      "r.get('/api/search', handler); // not '/api/eval'",
      'const p = `/api/v1/${collection}`;',
      'const q = `${base}/api/chat`;',
      'const root = "/API";',
      "const fine = HTTP_ROUTES.searchGet.path + '/apiary';",
    ].join('\n');
    expect(apiPathLiterals('probe.ts', source)).toEqual(['2: /api/search', '3: /api/v1/', '4: /api/chat', '5: /API']);
  });

  it('no product file outside contract/ spells an /api/ path', () => {
    const files = PRODUCT.flatMap(tsFiles);
    expect(files).toEqual(
      expect.arrayContaining([
        'service/app.ts',
        'service/routes/search.ts',
        'configs/sections/rate-limit.ts',
        'service/http/contract/client.ts',
      ]),
    );
    const spelled = files.flatMap((f) =>
      apiPathLiterals(f, readFileSync(join(ROOT, f), 'utf8')).map((hit) => `${f}:${hit}`),
    );
    expect(spelled).toEqual([]);
  });

  it('keeps the functional API under API_PREFIX and every route unique', () => {
    const routes: [string, HttpRoute][] = Object.entries(HTTP_ROUTES);
    for (const [id, r] of routes)
      if (!r.operational) expect({ id, under: r.path.startsWith(API_PREFIX) }).toEqual({ id, under: true });
    const keys = routes.map(([, r]) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    // Every functional route is counted under a type and falls in a default tier mapping; operational ones in neither.
    for (const [id, r] of routes)
      expect({ id, type: r.type !== undefined, tier: r.tier !== undefined }).toEqual({
        id,
        type: !r.operational,
        tier: !r.operational,
      });
  });

  it('has one operation of the OpenAPI document per documented route, keyed by its operationId', () => {
    const documented = (Object.entries(HTTP_ROUTES) as [RouteId, HttpRoute][]).filter(
      ([, r]) => r.documented !== false,
    );
    expect(OPERATIONS.map((op) => op.operationId).sort()).toEqual(documented.map(([id]) => id).sort());
    for (const op of OPERATIONS) {
      const r: HttpRoute = HTTP_ROUTES[op.operationId as RouteId];
      expect({ id: op.operationId, method: op.method, path: op.path, operational: op.operational === true }).toEqual({
        id: op.operationId,
        method: r.method.toLowerCase(),
        path: openApiPath(r.path),
        operational: r.operational === true,
      });
    }
  });

  it('names a list and an item route for every content collection, under the collection name', () => {
    for (const [name, { list, item }] of Object.entries(CONTENT_COLLECTIONS)) {
      expect(HTTP_ROUTES[list].path).toBe(`${API_PREFIX}v1/${name}`);
      expect(HTTP_ROUTES[item].path).toBe(`${API_PREFIX}v1/${name}/:id`);
    }
  });
});
