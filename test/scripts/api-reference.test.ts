import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from '../../service/http/contract/openapi';
import { withApiReference } from '../../scripts/api-reference';

describe('docs/api.md and the OpenAPI document agree', () => {
  const md = readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
  const paths = openApiDocument().paths as Record<string, Record<string, { parameters?: Array<{ name: string }> }>>;

  it('holds the reference generated from the document (run `make readme` to regenerate)', () => {
    expect(md).toBe(withApiReference(md));
  });

  it('describes in its prose only operations the document has, and every functional path of it', () => {
    const prose =
      md.slice(0, md.indexOf('<!-- api-reference:start -->')) + md.slice(md.indexOf('<!-- api-reference:end -->'));
    const norm = (p: string) => p.replace(/<(\w+)>/g, '{$1}').replace(/\?.*$/, '');
    // `### \`GET /api/x\`, \`POST /api/y\`` headings and `METHOD /path` mentions.
    const named = [...prose.matchAll(/\b(GET|POST) (\/[\w/{}<>.?&=-]*)/g)].map(([, m, p]) => `${m} ${norm(p)}`);
    for (const op of new Set(named)) {
      const [method, path] = op.split(' ');
      expect({ op, documented: Boolean(paths[path]?.[method.toLowerCase()]) }).toEqual({ op, documented: true });
    }
    for (const [path, ops] of Object.entries(paths)) {
      if (
        !path.startsWith('/api/') ||
        path === '/api/openapi.json' ||
        path.startsWith('/api/health') ||
        path.startsWith('/api/metrics') ||
        path === '/api/rate-limit'
      )
        continue;
      const collectionItem = /^\/api\/v1\/\w+\/\{id\}$/.test(path);
      if (!collectionItem)
        expect({ path, inProse: prose.includes(path.replace(/\{(\w+)\}/g, '<$1>')) || prose.includes(path) }).toEqual({
          path,
          inProse: true,
        });
      for (const op of Object.values(ops)) {
        for (const p of op.parameters ?? [])
          expect({
            path,
            parameter: p.name,
            inProse: prose.includes(`\`${p.name}\``) || prose.includes(`${p.name}=`),
          }).toEqual({ path, parameter: p.name, inProse: true });
      }
    }
  });
});
