import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ingestFolder } from '../../scripts/ingest';
import { ServiceProcess, type ServiceResponse } from '../../tools/harness/service-process';
import { malformedAnswer } from './answers';
import { WIDE_LIMITS, hostileEnv } from './hostile-env';
import { watchLiveness } from './liveness';

/**
 * Issue 29, item 6: items of one write whose titles slug to one id ("C++ tips", "C# tips", "C
 * tips" are all `c-tips`) were all reported `created` while all but the last vanished. Now every
 * item of a colliding group is refused, named by index and title, and what a response says is
 * what is stored. Against the real service process: ingest-batch, upload and the ingest CLI.
 */

const TOKEN = 'collision-suite-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };

interface BatchAnswer {
  error?: string;
  message?: string;
  stored: number;
  failed: number;
  results: Array<{
    index: number;
    status: string;
    id?: string;
    change?: string;
    field?: string;
    message?: string;
    collides_with?: Array<{ index: number; title: string }>;
  }>;
}

function multipart(boundary: string, files: Array<{ filename: string; content: string }>): string {
  let s = '';
  for (const f of files) {
    s += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${f.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${f.content}\r\n`;
  }
  return `${s}--${boundary}--\r\n`;
}

describe('no item of a write is lost silently to an id collision (issue 29, item 6)', () => {
  let svc: ServiceProcess;
  let dataDir: string;
  let folder: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-collide-'));
    folder = mkdtempSync(join(tmpdir(), 'svc-collide-folder-'));
    svc = await ServiceProcess.start({ env: hostileEnv(TOKEN, { ...WIDE_LIMITS, DATA_DIR: dataDir }) });
  }, 60000);

  afterAll(async () => {
    await svc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(folder, { recursive: true, force: true });
  });

  async function total(type: 'articles' | 'projects'): Promise<number> {
    const res = await svc.request(`/api/v1/${type}?limit=100`);
    expect(res.status).toBe(200);
    return res.json<{ total: number }>().total;
  }

  function expectWellFormed(res: ServiceResponse): void {
    expect(malformedAnswer(res)).toBeUndefined();
  }

  test('"C++ tips", "C# tips" (articles) and "C tips" (a project) in one batch: 422 naming every item, nothing stored', async () => {
    const watch = await watchLiveness(svc.port);
    const res = await svc.request('/api/ingest-batch', {
      method: 'POST',
      headers: AUTH,
      body: {
        items: [
          { type: 'article', title: 'C++ tips', body: 'templates' },
          { type: 'article', title: 'C# tips', body: 'linq' },
          { type: 'project', title: 'C tips', body: 'pointers' },
        ],
      },
    });
    expect(res.status).toBe(422);
    expectWellFormed(res);
    const body = res.json<BatchAnswer>();
    expect(body).toMatchObject({ error: 'invalid_items', stored: 0, failed: 3 });
    expect(body.message).toContain('item 0 ("C++ tips")');
    expect(body.message).toContain('item 1 ("C# tips")');
    expect(body.message).toContain('item 2 ("C tips")');
    expect(body.results.map((r) => [r.index, r.status, r.field])).toEqual([
      [0, 'invalid', 'id'],
      [1, 'invalid', 'id'],
      [2, 'invalid', 'id'],
    ]);
    expect(body.results[0].collides_with).toEqual([
      { index: 1, title: 'C# tips' },
      { index: 2, title: 'C tips' },
    ]);
    expect(body.results[0].message).toContain('"c-tips"');
    // What the answer says is what is stored: nothing.
    expect(await total('articles')).toBe(0);
    expect(await total('projects')).toBe(0);
    expect((await svc.request('/api/v1/projects/c-tips')).status).toBe(404);
    expect((await watch.stop()).missed).toEqual([]);
  });

  test('colliding items among distinct ones: 207, the distinct ones stored, every answer matching the store', async () => {
    const res = await svc.request('/api/ingest-batch', {
      method: 'POST',
      headers: AUTH,
      body: {
        items: [
          { type: 'article', title: 'Rust tips', body: 'borrowing' },
          { type: 'article', title: 'C++ tips', body: 'templates' },
          { type: 'article', id: 'go-tips', title: 'Go tips', body: 'goroutines' },
          { type: 'project', title: 'C tips', body: 'pointers' },
          // The same item twice is a collision too: refused, not silently merged.
          { type: 'article', id: 'go-tips', title: 'Go tips', body: 'goroutines' },
        ],
      },
    });
    expect(res.status).toBe(207);
    expectWellFormed(res);
    const body = res.json<BatchAnswer>();
    expect(body.stored).toBe(1);
    expect(body.failed).toBe(4);
    expect(body.results.map((r) => [r.index, r.status, r.id ?? r.field])).toEqual([
      [0, 'stored', 'rust-tips'],
      [1, 'invalid', 'id'],
      [2, 'invalid', 'id'],
      [3, 'invalid', 'id'],
      [4, 'invalid', 'id'],
    ]);
    expect(body.results[2].message).toContain('"go-tips"');
    for (const r of body.results.filter((x) => x.status === 'stored')) {
      expect((await svc.request(`/api/v1/articles/${r.id}`)).status).toBe(200);
    }
    expect(await total('articles')).toBe(1);
    expect(await total('projects')).toBe(0);
  });

  test('1,000 items with one id: every one refused, each answer naming ten and counting the rest (bounded, not a million names)', async () => {
    const watch = await watchLiveness(svc.port);
    const items = Array.from({ length: 1000 }, (_, i) => ({ type: 'article', title: 'Same title', body: `body ${i}` }));
    const res = await svc.request('/api/ingest-batch', { method: 'POST', headers: AUTH, body: { items } });
    expect(res.status).toBe(422);
    expectWellFormed(res);
    // ~1,000 results of a bounded size each; naming every other item in each would be ~30 MB.
    expect(res.text.length).toBeLessThan(2 * 1024 * 1024);
    const body = res.json<BatchAnswer & { results: Array<{ collides_with_count?: number }> }>();
    expect(body).toMatchObject({ stored: 0, failed: 1000 });
    expect(body.results[500].collides_with).toHaveLength(10);
    expect(body.results[500].collides_with_count).toBe(999);
    expect(body.results[500].message).toContain('and 990 more');
    expect(await total('articles')).toBe(1);
    expect((await watch.stop()).missed).toEqual([]);
  });

  test('an upload whose files hold colliding items: 422 duplicate_id naming both, nothing stored (all or nothing)', async () => {
    const boundary = 'collisionBoundary';
    const res = await svc.request('/api/upload', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: multipart(boundary, [
        {
          filename: 'a.json',
          content: JSON.stringify([
            { type: 'article', title: 'Zig notes', body: 'comptime' },
            { type: 'article', title: 'C++ tips', body: 'x' },
          ]),
        },
        { filename: 'b.md', content: '---\ntitle: C tips\ntype: project\n---\npointers\n' },
      ]),
    });
    expect(res.status).toBe(422);
    expectWellFormed(res);
    const body = res.json<{ error: string; message: string; field: string; id: string; items: unknown[] }>();
    expect(body).toMatchObject({ error: 'duplicate_id', field: 'id', id: 'c-tips' });
    expect(body.message).toContain('a.json item 1 ("C++ tips")');
    expect(body.message).toContain('b.md item 0 ("C tips")');
    expect(body.items).toEqual([
      { file: 'a.json', index: 1, title: 'C++ tips' },
      { file: 'b.md', index: 0, title: 'C tips' },
    ]);
    expect((await svc.request('/api/v1/articles/zig-notes')).status).toBe(404);
    expect(await total('projects')).toBe(0);
  });

  test('npm run ingest reports colliding files as failed and sends neither, across batches too', async () => {
    writeFileSync(join(folder, 'cpp.md'), '---\ntitle: C++ tips\nid: shared-id\n---\ntemplates\n');
    writeFileSync(join(folder, 'csharp.md'), '---\ntitle: C# tips\n---\nlinq\n');
    writeFileSync(join(folder, 'zz-c.md'), '---\ntitle: C tips\nid: shared-id\n---\npointers\n');
    writeFileSync(join(folder, 'kotlin.md'), '---\ntitle: Kotlin tips\n---\ncoroutines\n');
    const out = new PassThrough();
    const text: string[] = [];
    out.on('data', (c: Buffer) => text.push(c.toString()));
    // One item per batch: the collision spans batches, where the service alone could not see it.
    const summary = await ingestFolder({ dir: folder, url: svc.url, token: TOKEN, out, batchSize: 1 });
    expect(summary.stored).toBe(2);
    expect(summary.failed.map((f) => f.file).sort()).toEqual(['cpp.md', 'zz-c.md']);
    expect(summary.failed[0].reason).toContain('"shared-id"');
    expect(summary.failed[0].reason).toContain('("C++ tips")');
    expect(summary.failed[0].reason).toContain('("C tips")');
    expect(text.join('')).toContain('2 failed');
    expect((await svc.request('/api/v1/articles/shared-id')).status).toBe(404);
    expect((await svc.request('/api/v1/articles/csharp')).status).toBe(200);
  });
});
