import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { loadSettings, SettingsError } from '../../../configs';
import { headingAnchor, markdownSections } from '../../../service/content/parse/markdown-sections';
import { loadDemoContent } from '../../../service/demo/demo-content';
import { buildTestApp } from '../../helpers/app';

describe('markdownSections', () => {
  it('makes one article per ## section with tags and a URL to the section anchor', () => {
    const md =
      '# Rate limiting\n\nIntro.\n\n## How it works\n\nGCRA.\n\n```\n## not a heading\n```\n\n## Tiers & keys\n\nPer IP.\n';
    const items = markdownSections('docs/rate-limiting.md', md);
    expect(items.map((i) => i.id)).toEqual([
      'docs-rate-limiting',
      'docs-rate-limiting-how-it-works',
      'docs-rate-limiting-tiers-keys',
    ]);
    expect(items[1]).toMatchObject({
      type: 'article',
      title: 'Rate limiting: How it works',
      tags: ['docs', 'rate-limiting'],
      url: '/docs/rate-limiting.md#how-it-works',
    });
    expect(items[1].body).toContain('## not a heading');
    expect(items[2].url).toBe('/docs/rate-limiting.md#tiers--keys');
  });

  it('anchors headings the way GitHub does', () => {
    expect(headingAnchor('Two commands: `make run`')).toBe('two-commands-make-run');
  });
});

describe('loadDemoContent', () => {
  it('reads README.md and docs/*.md of the project', () => {
    const items = loadDemoContent();
    expect(items.some((i) => i.url?.startsWith('/README.md'))).toBe(true);
    expect(items.some((i) => i.url?.startsWith('/docs/rate-limiting.md'))).toBe(true);
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
  });
});

describe('DEMO_CONTENT', () => {
  it('defaults on in development and off elsewhere; refused in production', () => {
    expect(loadSettings({}).service.demoContent).toBeUndefined();
    let err: unknown;
    try {
      loadSettings({ ENVIRONMENT: 'production', DEMO_CONTENT: 'true', API_TOKEN: 'x'.repeat(32) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SettingsError);
    expect((err as SettingsError).message).toMatch(/DEMO_CONTENT/);
  });

  it('loads the docs into an empty development store before ready, so search finds rate limiting', async () => {
    const t = await buildTestApp({ service: { environment: 'development', demoContent: undefined } });
    try {
      const res = await request(t.app).get('/api/search').query({ q: 'rate limiting' });
      expect(res.status).toBe(200);
      expect(res.body.total).toBeGreaterThan(0);
      expect(JSON.stringify(res.body)).toContain('/docs/rate-limiting.md#');
    } finally {
      await t.close();
    }
  });

  it('never touches a DATA_DIR that already holds content', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-demo-'));
    try {
      const first = await buildTestApp({ service: { dataDir, environment: 'development', demoContent: false } });
      await request(first.app)
        .post('/api/ingest')
        .send({ id: 'mine', type: 'article', title: 'Mine', body: 'my own words' })
        .expect(201);
      await first.close();
      const second = await buildTestApp({ service: { dataDir, environment: 'development', demoContent: true } });
      try {
        expect(second.deps.features.contentHealth?.().items).toBe(1);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('stays off outside development by default', async () => {
    const t = await buildTestApp({ service: { environment: 'staging', demoContent: undefined } });
    try {
      expect(t.deps.features.contentHealth?.().items).toBe(0);
    } finally {
      await t.close();
    }
  });
});
