import { Writable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import { createLogger } from '../../../service/lib/logger';
import { HttpError, errorHandler, notFoundHandler } from '../../../service/http/errors';
import { silentLogger } from '../../../service/lib/logger';
import { buildTestApp, type TestApp } from '../../helpers/app';

describe('JSON errors from the app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ service: { maxBodyBytes: 2048 } });
  });
  afterAll(() => t.close());

  it('unknown path → 404 {error, message}', async () => {
    const res = await request(t.app).get('/api/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body).toEqual({ error: 'not_found', message: 'no route for GET /api/nothing-here' });
  });

  it('malformed JSON body → 400', async () => {
    const res = await request(t.app).post('/api/search').set('Content-Type', 'application/json').send('{"a": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_json', message: 'request body is not valid JSON' });
  });

  it('body over the limit → 413', async () => {
    const res = await request(t.app)
      .post('/api/search')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ x: 'y'.repeat(5000) }));
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
    expect(res.body.message).toContain('2048');
  });
});

describe('malformed percent-encoding in the path', () => {
  let t: TestApp;
  const logged: string[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logged.push(chunk.toString());
        done();
      },
    });
    t = await buildTestApp({}, { logger: createLogger('info', sink) });
  });
  afterAll(() => t.close());

  it.each(['/api/export/%zz', '/api/v1/articles/%', '/api/v1/projects/%E0%A4%A'])(
    'GET %s → 400 bad_request, no stack trace, not an error log',
    async (path) => {
      const res = await request(t.app).get(path);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/malformed percent-encoding/) });
      expect(res.text).not.toContain('URIError');
      expect(logged.filter((l) => l.includes('"level":50'))).toEqual([]);
    },
  );

  it('is counted as a 4xx, not a 5xx', async () => {
    await request(t.app).get('/api/export/%zz');
    const text = await t.deps.registry.metrics();
    expect(text).toMatch(/svc_ai_search_http_request_duration_seconds_count\{[^}]*status_class="4xx"[^}]*\} [1-9]/);
    expect(text).not.toMatch(/status_class="5xx"/);
  });
});

describe('errorHandler', () => {
  function appThrowing(err: unknown) {
    const app = express();
    app.get('/boom', () => {
      throw err;
    });
    app.get('/async', async () => {
      await Promise.resolve();
      throw err;
    });
    app.use(notFoundHandler);
    app.use(errorHandler(silentLogger()));
    return app;
  }

  it('renders an HttpError with its status, code and details', async () => {
    const res = await request(
      appThrowing(new HttpError(422, 'invalid_item', 'title is required', { field: 'title' })),
    ).get('/boom');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'invalid_item', message: 'title is required', field: 'title' });
  });

  it.each(['/boom', '/async'])('an unexpected error on %s is a 500 without a stack trace', async (path) => {
    const err = new Error('secret internals at /srv/app.js:12');
    const res = await request(appThrowing(err)).get(path);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal_error', message: 'an unexpected error occurred' });
    expect(res.text).not.toContain('/srv/app.js');
    expect(res.text).not.toContain('at ');
  });

  it('a thrown non-Error is still a clean 500', async () => {
    const res = await request(appThrowing('just a string')).get('/boom');
    expect(res.status).toBe(500);
    expect(res.body.error).toBe('internal_error');
  });
});
