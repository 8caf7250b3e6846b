import { mkdtempSync, rmSync } from 'node:fs';
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
      const upload = await request(first.app).post('/api/upload').attach('file', Buffer.from('Late addition\nHummingbirds hover.'), 'late.txt');
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
});
