import request from 'supertest';
import { buildTestApp, type TestApp } from '../../helpers/app';

const item = { type: 'article', title: 'Guarded', body: 'text' };
const WRITES: Array<[string, (r: request.Test) => request.Test]> = [
  ['/api/ingest', (r) => r.send(item)],
  ['/api/ingest-batch', (r) => r.send({ items: [item] })],
  ['/api/upload', (r) => r.attach('file', Buffer.from('Title\nbody'), 'a.txt')],
];

describe('write access', () => {
  describe('with API_TOKEN set', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await buildTestApp({
        service: { environment: 'production', apiToken: 's3cret-token' },
        rateLimit: { enabled: false },
      });
    });
    afterAll(() => t.close());

    it.each(WRITES)('%s answers 401 without a bearer token', async (path, send) => {
      const res = await send(request(t.app).post(path));
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: 'unauthorized' });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    });

    it.each(WRITES)('%s answers 403 with a wrong token', async (path, send) => {
      const res = await send(request(t.app).post(path).set('Authorization', 'Bearer wrong'));
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'forbidden' });
    });

    it.each(WRITES)('%s accepts the right token', async (path, send) => {
      const res = await send(request(t.app).post(path).set('Authorization', 'Bearer s3cret-token'));
      expect(res.status).toBe(201);
    });

    it('answers 401 to a non-bearer scheme', async () => {
      const res = await request(t.app).post('/api/ingest').set('Authorization', 'Basic czNjcmV0').send(item);
      expect(res.status).toBe(401);
    });

    it('leaves reads open', async () => {
      expect((await request(t.app).get('/api/search?q=guarded')).status).toBe(200);
      expect((await request(t.app).get('/api/v1/articles')).status).toBe(200);
    });
  });

  it.each(['production', 'staging'] as const)(
    'refuses writes in %s without API_TOKEN, saying how to enable them',
    async (environment) => {
      const t = await buildTestApp({ service: { environment }, rateLimit: { enabled: false } });
      try {
        for (const [path, send] of WRITES) {
          const res = await send(request(t.app).post(path));
          expect(res.status).toBe(403);
          expect(res.body.error).toBe('writes_disabled');
          expect(res.body.message).toMatch(/set API_TOKEN/);
        }
      } finally {
        await t.close();
      }
    },
  );

  it('opens writes in development without API_TOKEN and warns at start', async () => {
    const lines: string[] = [];
    const pino = (await import('pino')).default;
    const logger = pino({ level: 'warn' }, { write: (s: string) => lines.push(s) });
    const t = await buildTestApp({ service: { environment: 'development' } }, { logger });
    try {
      expect(lines.join('')).toMatch(/API_TOKEN is not set: ingest and upload are open/);
      expect((await request(t.app).post('/api/ingest').send(item)).status).toBe(201);
    } finally {
      await t.close();
    }
  });
});
