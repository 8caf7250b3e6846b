import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { buildTestApp } from '../../helpers/app';
import { seedSite, SITE_ITEMS } from './seed';

describe('restart', () => {
  it('ingested content survives a restart on the same DATA_DIR and is searchable at once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'restart-'));
    try {
      const first = await buildTestApp({ service: { environment: 'testing', dataDir } });
      await seedSite(first.app);
      const upload = await request(first.app)
        .post('/api/upload')
        .attach('file', Buffer.from('Late addition\nHummingbirds hover.'), 'late.txt');
      expect(upload.status).toBe(201);
      const before = await request(first.app).get('/api/v1/articles/kubernetes-at-home');
      await first.close();

      const second = await buildTestApp({ service: { environment: 'testing', dataDir } });
      try {
        expect((await request(second.app).get('/health/ready')).status).toBe(200);
        const after = await request(second.app).get('/api/v1/articles/kubernetes-at-home');
        expect(after.body).toEqual(before.body);
        const all = JSON.parse((await request(second.app).get('/api/export/all.json')).text) as unknown[];
        expect(all).toHaveLength(SITE_ITEMS.length + 1);
        const search = await request(second.app).get('/api/search?q=hummingbirds');
        expect(search.body.results[0].id).toBe('late-addition');
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('CONTENT_COMPACTION_BYTES decides when the DATA_DIR store compacts into a snapshot', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'compaction-'));
    // Each round writes other bodies: an item sent again unchanged is not written again.
    let round = 0;
    const ingest = async (compactionBytes?: number) => {
      round++;
      const t = await buildTestApp({
        service: { environment: 'testing', dataDir },
        ...(compactionBytes ? { content: { compactionBytes } } : {}),
      });
      try {
        for (let i = 0; i < 10; i++) {
          const res = await request(t.app)
            .post('/api/ingest')
            .send({ id: `note-${i}`, type: 'article', title: `Note ${i}`, body: `round ${round} `.repeat(30) });
          expect(res.status).toBe(201);
        }
      } finally {
        await t.close();
      }
      return readdirSync(dataDir).filter((f) => f.endsWith('.snapshot'));
    };
    try {
      // About 4 KB of log: far below the 8 MiB default, past a 2 KiB setting.
      expect(await ingest()).toEqual([]);
      const snapshots = await ingest(2048);
      expect(snapshots).toHaveLength(1);
      expect(snapshots[0]).toMatch(/^content-[1-9]\d*\.snapshot$/);
      const again = await buildTestApp({ service: { environment: 'testing', dataDir } });
      try {
        expect((await request(again.app).get('/api/v1/articles')).body.total).toBe(10);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
