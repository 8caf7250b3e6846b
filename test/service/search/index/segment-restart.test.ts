import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capture } from '../../../helpers/log-capture';
import request from 'supertest';
import { SEGMENT_FILE } from '../../../../service/search/index/segment-store';
import { buildTestApp } from '../../../helpers/app';

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}

const items = Array.from({ length: 40 }, (_, i) => ({
  id: `note-${i}`,
  type: 'article',
  title: `Note ${i}`,
  body: `hummingbirds hover ${i} `.repeat(3) + (i === 7 ? 'zeppelin' : ''),
}));

describe('the service with a persisted search segment (file store)', () => {
  it('keeps the segment beside the content in DATA_DIR/search-index, and a restart loads it and re-indexes only what changed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'segment-restart-'));
    const file = join(dataDir, 'search-index', SEGMENT_FILE);
    const boot = async (indexDir?: 'off') => {
      const { logger, lines } = capture();
      const app = await buildTestApp(
        { service: { environment: 'testing', dataDir }, ...(indexDir ? { search: { indexDir } } : {}) },
        { logger },
      );
      return {
        ...app,
        lines,
        loaded: () => lines.find((l) => String(l.msg).startsWith('search index loaded from the persisted segment')),
      };
    };
    try {
      const first = await boot();
      expect((await request(first.app).post('/api/ingest-batch').send({ items })).status).toBe(201);
      await first.close();
      // The stop persisted what the ingest appended (issue 37: the first start wrote its segment while empty).
      expect(first.lines.find((l) => l.msg === 'search segment persisted before exit')).toMatchObject({
        documents: 40,
      });
      // A start that leaves the segment alone (INDEX_DIR=off) changes an item: the segment lacks the
      // change, as after a stop that ran out of time.
      const second = await boot('off');
      // And the content store's catalogue of the 40 items: the next start makes them lazily.
      await until(() => second.lines.some((l) => l.msg === 'content catalogue written' && l.items === 40));
      expect(existsSync(file)).toBe(true);
      expect(
        (
          await request(second.app)
            .post('/api/ingest')
            .send({ ...items[3], body: 'now about airships' })
        ).status,
      ).toBe(201);
      await second.close();

      const third = await boot();
      try {
        expect(third.loaded()).toMatchObject({ documents: 40, changed: 1, removed: 0 });
        expect(third.lines.find((l) => l.msg === 'content store loaded')).toMatchObject({ items: 40, catalogue: true });
        expect((await request(third.app).get('/api/search?q=zeppelin&type=project')).body.total).toBe(0);
        expect((await request(third.app).get('/api/search?q=zeppelin&type=article')).body.results[0].snippet).toContain(
          '<mark>zeppelin</mark>',
        );
        expect((await request(third.app).get('/api/v1/articles/note-5')).body).toMatchObject({
          id: 'note-5',
          title: 'Note 5',
          body: items[5].body,
        });
        const list = await request(third.app).get('/api/v1/articles?limit=50');
        expect(list.body.items).toHaveLength(40);
        expect(list.body.items.find((i: { id: string }) => i.id === 'note-9')).toMatchObject({ title: 'Note 9' });
        expect((await request(third.app).get('/health/ready')).status).toBe(200);
        expect(
          (await request(third.app).get('/api/search?q=zeppelin')).body.results.map((r: { id: string }) => r.id),
        ).toEqual(['note-7']);
        expect(
          (await request(third.app).get('/api/search?q=airships')).body.results.map((r: { id: string }) => r.id),
        ).toEqual(['note-3']);
        const hover = await request(third.app).get('/api/search?q=hummingbirds&limit=50');
        expect(hover.body.total).toBe(39);
        expect(hover.body.results[0].snippet).toContain('<mark>hummingbirds</mark>');
      } finally {
        await third.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a stop that finds its shutdown budget spent says so and leaves the segment as it was; the next start re-indexes what it lacks', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'segment-late-stop-'));
    const file = join(dataDir, 'search-index', SEGMENT_FILE);
    const boot = async () => {
      const { logger, lines } = capture();
      const app = await buildTestApp({ service: { environment: 'testing', dataDir } }, { logger });
      return { ...app, lines };
    };
    try {
      const first = await boot();
      expect(
        (
          await request(first.app)
            .post('/api/ingest-batch')
            .send({ items: items.slice(0, 30) })
        ).status,
      ).toBe(201);
      await first.close();
      const before = readFileSync(file);
      const second = await boot();
      expect(
        (
          await request(second.app)
            .post('/api/ingest-batch')
            .send({ items: items.slice(30, 36) })
        ).status,
      ).toBe(201);
      // SIGTERM an hour ago (by the app's clock): the drain used the whole termination grace.
      second.deps.lifecycle.markDraining(second.clock.now() - 3_600_000);
      await second.close();
      expect(
        second.lines.find((l) =>
          String(l.msg).startsWith('search segment not persisted before exit: the shutdown budget ran out'),
        ),
      ).toMatchObject({
        level: 40,
        documents: 36,
        appended: 6,
        budgetMs: 0,
      });
      expect(readFileSync(file).equals(before)).toBe(true);
      const third = await boot();
      try {
        expect(third.lines.find((l) => l.msg === 'content loaded and indexed')).toMatchObject({
          items: 36,
          index: { from: 'segment', documents: 36, reindexed: 6 },
        });
        expect((await request(third.app).get('/api/search?q=hummingbirds&limit=50')).body.total).toBe(36);
      } finally {
        await third.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('INDEX_DIR=off persists nothing', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'segment-off-'));
    try {
      const app = await buildTestApp({ service: { environment: 'testing', dataDir }, search: { indexDir: 'off' } });
      expect((await request(app.app).post('/api/ingest-batch').send({ items })).status).toBe(201);
      await app.close();
      expect(existsSync(join(dataDir, 'search-index'))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
