import { connect } from 'node:net';
import request from 'supertest';
import { listen, type RunningServer } from '../../../service/server';
import { SEARCH_BODY_BYTES } from '../../../service/routes/search';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { parseAnswer, sendThenRead } from '../../helpers/raw-http';

/** A JSON array of `n` empty objects: cheap to send, costly to parse (the 10 MB case). */
const emptyObjects = (bytes: number) => Buffer.from(`[${'{},'.repeat(Math.floor(bytes / 3) - 1)}{}]`);

/** Lengths of the strings JSON.parse was given while `fn` ran: a parsed body shows up here. */
async function parsedLengths(fn: () => Promise<void>): Promise<number[]> {
  const spy = jest.spyOn(JSON, 'parse');
  try {
    await fn();
    return spy.mock.calls.map(([text]) => String(text).length);
  } finally {
    spy.mockRestore();
  }
}

describe('request bodies are read only by the route that wants them', () => {
  let t: TestApp;
  let running: RunningServer;
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing', apiToken: 'secret-token' } });
    running = await listen(t.app, t.deps, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await running.shutdown();
    t.removeDataDir();
  });

  it('a 10 MB JSON body to an unknown path: 404 JSON, the body never parsed, the connection closed cleanly', async () => {
    const body = emptyObjects(10 * 1024 * 1024);
    let answer!: Awaited<ReturnType<typeof sendThenRead>>;
    const lengths = await parsedLengths(async () => {
      answer = await sendThenRead(
        running.port,
        '/api/no-such-path',
        { 'Content-Type': 'application/json', Connection: 'close' },
        body,
        { chunked: false },
      );
    });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({ error: 'not_found', message: 'no route for POST /api/no-such-path' });
    expect(lengths.filter((n) => n > 1024)).toEqual([]);
  });

  it('the same body, chunked: 404 as well', async () => {
    const answer = await sendThenRead(
      running.port,
      '/api/nothing',
      { 'Content-Type': 'application/json' },
      emptyObjects(2 * 1024 * 1024),
      { chunked: true },
    );
    expect(answer.status).toBe(404);
  });

  it('a body declared larger than the drain bound: 404 answered and the connection closed, no hang', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(running.port, '127.0.0.1');
      let got = '';
      socket.on('data', (b: Buffer) => (got += b.toString()));
      socket.on('error', (e: NodeJS.ErrnoException) =>
        e.code === 'ECONNRESET' || e.code === 'EPIPE' ? resolve(got) : reject(e),
      );
      socket.on('close', () => resolve(got));
      socket.write(
        `POST /api/nothing HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n[{},{}`,
      );
    });
    expect(parseAnswer(text)?.status).toBe(404);
  });

  it('a write without a token: 401 before its body is read or parsed', async () => {
    const body = emptyObjects(4 * 1024 * 1024);
    let answer!: Awaited<ReturnType<typeof sendThenRead>>;
    const lengths = await parsedLengths(async () => {
      answer = await sendThenRead(running.port, '/api/ingest-batch', { 'Content-Type': 'application/json' }, body, {
        chunked: false,
      });
    });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'unauthorized' });
    expect(lengths.filter((n) => n > 1024)).toEqual([]);
  });

  it('search takes kilobytes: a larger body is 413, a normal one is answered', async () => {
    const big = await request(t.app)
      .post('/api/search')
      .set('Content-Type', 'application/json')
      .send({ q: 'x', pad: 'y'.repeat(SEARCH_BODY_BYTES) });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ error: 'payload_too_large' });
    expect(big.body.message).toContain(String(SEARCH_BODY_BYTES));
    const ok = await request(t.app).post('/api/search').send({ q: 'kubernetes' });
    expect(ok.status).toBe(200);
  });

  it('ingest-batch takes up to MAX_BODY_SIZE, with the token', async () => {
    const items = Array.from({ length: 200 }, (_, i) => ({
      type: 'article',
      title: `Item ${i}`,
      body: 'word '.repeat(200),
    }));
    const res = await request(t.app)
      .post('/api/ingest-batch')
      .set('Authorization', 'Bearer secret-token')
      .send({ items });
    expect(res.status).toBe(201);
    expect(res.body.stored).toBe(200);
  });

  it('a GET with a body is answered without reading it', async () => {
    const res = await request(t.app)
      .get('/api/search?q=item')
      .set('Content-Type', 'application/json')
      .send('{"ignored": true}');
    expect(res.status).toBe(200);
  });
});
