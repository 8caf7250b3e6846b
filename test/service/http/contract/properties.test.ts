import fc from 'fast-check';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../../helpers/app';
import { doc, invalid, resolve, valid, type Json } from '../../../helpers/openapi-arbitraries';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

/**
 * Requests generated from the OpenAPI document (every answer is also proven against it by
 * helpers/contract-setup.ts): valid parameters and bodies get a documented success or a
 * documented refusal (404 for an unknown id), never a 500; a request with one field broken gets
 * a 400 (422 for an item's own fields) that names the field.
 */
describe('property tests from the OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ service: { demoContent: true }, rateLimit: { enabled: false } });
  });
  afterAll(() => t.close());

  const gets = Object.entries(doc.paths).flatMap(([path, ops]) =>
    ops.get && (ops.get.parameters as Json[] | undefined)?.length ? [[path, ops.get] as const] : [],
  );

  it.each(gets.map(([p, op]) => [p, op]))(
    'GET %s: valid parameters → a documented answer, never a 500',
    async (path, op) => {
      const params = op.parameters as Array<{ name: string; in: string; required: boolean; schema: Json }>;
      const arb = fc.record(Object.fromEntries(params.map((p) => [p.name, valid(p.schema)])), {
        requiredKeys: params.filter((p) => p.required).map((p) => p.name),
      });
      await fc.assert(
        fc.asyncProperty(arb, async (values) => {
          let url = path;
          const query: Record<string, string> = {};
          for (const p of params) {
            const v = (values as Record<string, unknown>)[p.name];
            if (v === undefined) continue;
            if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(v)));
            else query[p.name] = String(v);
          }
          const res = await request(t.app).get(url).query(query);
          expect([200, 404]).toContain(res.status);
        }),
        { numRuns: 25, seed: 25 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it.each(gets.map(([p, op]) => [p, op]))('GET %s: one broken query parameter → 400 naming it', async (path, op) => {
    const params = (op.parameters as Array<{ name: string; in: string; schema: Json }>).filter((p) => p.in === 'query');
    for (const p of params) {
      for (const bad of invalid(p.schema)) {
        const query: Record<string, string> = {
          ...(params.some((x) => x.name === 'q') ? { q: 'redis' } : {}),
          [p.name]: String(bad),
        };
        // A number is a fine string in a query; only what the string form breaks counts.
        if (typeof bad === 'number' && resolve(p.schema).type === 'string') continue;
        const res = await request(t.app).get(path).query(query);
        expect({ param: p.name, bad, status: res.status, field: res.body.field }).toEqual({
          param: p.name,
          bad,
          status: 400,
          field: p.name,
        });
      }
    }
  });

  const posts = Object.entries(doc.paths).flatMap(([path, ops]) => {
    const body = (ops.post?.requestBody as { content: Record<string, { schema: Json }> } | undefined)?.content[
      'application/json'
    ];
    return body && !(ops.post.security as unknown[]).length ? [[path, body.schema] as const] : [];
  });

  it.each(posts.map(([p, s]) => [p, s]))(
    'POST %s: valid JSON bodies → a documented answer; one broken field → 400 naming it',
    async (path, schema) => {
      await fc.assert(
        fc.asyncProperty(valid(schema), async (body) => {
          // A query vector's length is EMBEDDINGS_DIMENSIONS, a setting the document cannot state:
          // left out here (test/service/routes/search-semantic.test.ts sends right and wrong ones).
          const res = await request(t.app)
            .post(path)
            .send({ ...(body as object), vector: undefined });
          expect(res.status).toBe(200);
        }),
        { numRuns: 15, seed: 25 },
      );
      const s = resolve(schema);
      const sample = fc.sample(valid(schema), { numRuns: 1, seed: 25 })[0] as Json;
      for (const [name, prop] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
        for (const bad of invalid(prop)) {
          const res = await request(t.app)
            .post(path)
            .send({ ...sample, [name]: bad });
          expect({ name, status: res.status, field: String(res.body.field).split('.')[0] }).toEqual({
            name,
            status: 400,
            field: name,
          });
        }
      }
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
