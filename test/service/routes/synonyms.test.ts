import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { FeatureSet } from '../../../service/features';
import type { EmbeddedIndex } from '../../../service/search/embedded-index';
import { buildTestApp, type TestApp } from '../../helpers/app';

const article = (id: string, title: string, body: string) => ({ id, type: 'article', title, body });
const ITEMS = [
  article('auto', 'Parking', 'Where to leave the automobile overnight. Bring coins for the meter.'),
  article('bike', 'Cycling', 'A bicycle needs a good lock. Vehicle rules apply on the road.'),
  article('bread', 'Baking', 'Flour, water and salt make bread.'),
];

/** The search route's ids for `q`. */
async function ids(t: TestApp, q: string): Promise<string[]> {
  const res = await request(t.app).get('/api/search').query({ q });
  expect(res.status).toBe(200);
  return res.body.results.map((r: { id: string }) => r.id);
}

describe('SEARCH_SYNONYMS_FILE in the service', () => {
  let dir: string;
  let file: string;
  let dataDir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'synonyms-app-'));
    file = join(dir, 'synonyms.txt');
    dataDir = join(dir, 'data');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const start = () =>
    buildTestApp({
      service: { environment: 'testing', dataDir },
      rateLimit: { enabled: false },
      search: { synonymsFile: file },
    });

  it('is used by search and chat retrieval alike, and a restart takes a new file without re-indexing', async () => {
    writeFileSync(file, '# cars\ncar, automobile\n');
    const a = await start();
    try {
      expect((await request(a.app).post('/api/ingest-batch').send({ items: ITEMS })).status).toBe(201);
      expect(await ids(a, 'car')).toEqual(['auto']);
      const chat = await request(a.app).post('/api/chat').send({ message: 'Where can I leave my car?' });
      expect(chat.status).toBe(200);
      expect(chat.body.sources.map((s: { id: string }) => s.id)).toContain('auto');
      // The extractive provider quotes the source the synonym found.
      expect(chat.body.answer).toContain('automobile');
    } finally {
      await a.close();
    }

    writeFileSync(file, 'car => vehicle\n');
    const b = await start();
    try {
      const index = (b.deps.features as FeatureSet).context.search.index as EmbeddedIndex;
      expect(index.startedFrom).toMatchObject({ from: 'segment', reindexed: 0 });
      expect(await ids(b, 'car')).toEqual(['bike']);
      expect(await ids(b, 'vehicle')).toEqual(['bike']);
      expect(await ids(b, 'automobile')).toEqual(['auto']);
    } finally {
      await b.close();
    }
  });
});
