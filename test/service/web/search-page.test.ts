import request from 'supertest';
import { SEARCH_PAGE_CSP } from '../../../service/web/search-page';
import { buildTestApp } from '../../helpers/app';

describe('search page at /', () => {
  it('serves the page, its script and style with a CSP and no inline script', async () => {
    const t = await buildTestApp({ service: { environment: 'development' } });
    try {
      const page = await request(t.app).get('/').expect(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      expect(page.headers['content-security-policy']).toBe(SEARCH_PAGE_CSP);
      expect(SEARCH_PAGE_CSP).not.toMatch(/unsafe-inline/);
      expect(page.text).toContain('<script src="/ui/app.js" defer></script>');
      expect(page.text).not.toMatch(/<script>(?!<)/);
      const js = await request(t.app).get('/ui/app.js').expect(200);
      expect(js.headers['content-type']).toMatch(/javascript/);
      expect(js.text).toContain('/api/search');
      await request(t.app)
        .get('/ui/style.css')
        .expect(200)
        .expect('Content-Type', /text\/css/);
    } finally {
      await t.close();
    }
  });

  it('is off outside development unless SEARCH_PAGE is set', async () => {
    const staging = await buildTestApp({ service: { environment: 'staging', apiToken: 't'.repeat(32) } });
    try {
      const res = await request(staging.app).get('/').expect(404);
      expect(res.body.error).toBeDefined();
    } finally {
      await staging.close();
    }
    const on = await buildTestApp({ service: { environment: 'staging', apiToken: 't'.repeat(32), searchPage: true } });
    try {
      await request(on.app).get('/').expect(200);
    } finally {
      await on.close();
    }
  });
});
