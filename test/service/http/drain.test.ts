import { request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import { answerThenDrain } from '../../../service/http/drain';
import { waitFor } from '../../../tools/harness/ports';
import { parseAnswer, sendThenRead } from '../../helpers/raw-http';

const MAX = 1024 * 1024;

describe('answerThenDrain', () => {
  let server: Server;
  let port: number;
  /** What the server saw when each answer closed: whether the request body had been read to its end. */
  const finished: boolean[] = [];
  /** Waits until the server has closed one more answer. */
  const closed = (n = 1) =>
    waitFor(`${n} answer(s) closed`, () => finished.length >= n && finished, { timeoutMs: 10_000, intervalMs: 10 });
  beforeAll(async () => {
    const app = express();
    // /refuse gives the body time enough for any machine; /refuse-quick is for the client that stalls.
    const refuse =
      (timeoutMs: number): express.RequestHandler =>
      (req, res) => {
        res.once('close', () => finished.push(req.readableEnded));
        answerThenDrain(
          req,
          res,
          413,
          { error: 'payload_too_large', message: 'too big' },
          { maxBytes: MAX, timeoutMs },
        );
      };
    app.post('/refuse', refuse(10_000));
    app.post('/refuse-quick', refuse(400));
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  beforeEach(() => {
    finished.length = 0;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it.each([false, true])(
    'within the bound (chunked %s): answers, reads the rest off, then closes cleanly',
    async (chunked) => {
      const a = await sendThenRead(port, '/refuse', {}, Buffer.alloc(MAX - 64 * 1024, 'x'), { chunked });
      expect(a.status).toBe(413);
      expect(a.headers.connection).toBe('close');
      expect(a.headers['content-length']).toBe(String(Buffer.byteLength(a.body)));
      expect(JSON.parse(a.body)).toEqual({ error: 'payload_too_large', message: 'too big' });
      expect(await closed()).toEqual([true]);
    },
  );

  /** A client that reads while it sends (Node's http client), for the cases that cut the connection. */
  const readWhileSending = (headers: Record<string, string>, body: Buffer) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/refuse', headers });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });

  it('a declared Content-Length past the bound: answers and closes without reading', async () => {
    const a = await readWhileSending({ 'content-length': String(4 * MAX) }, Buffer.alloc(4 * MAX));
    expect(a.status).toBe(413);
    expect(JSON.parse(a.body)).toMatchObject({ error: 'payload_too_large' });
    expect(await closed()).toEqual([false]);
  });

  it('a chunked body past the bound: stops discarding at maxBytes and closes', async () => {
    const a = await readWhileSending({ 'transfer-encoding': 'chunked' }, Buffer.alloc(16 * MAX)).catch(
      (e: NodeJS.ErrnoException) => e.code,
    );
    expect([413, 'ECONNRESET', 'EPIPE']).toContain(typeof a === 'object' ? a.status : a);
    expect(await closed()).toEqual([false]);
  });

  it('a client that stalls mid-body: the answer is readable and the connection ends after timeoutMs', async () => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    const started = Date.now();
    socket.write('POST /refuse-quick HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\nonly a little');
    await new Promise((r) => socket.once('close', r));
    const elapsed = Date.now() - started;
    expect(parseAnswer(Buffer.concat(received).toString())).toMatchObject({
      status: 413,
      headers: { connection: 'close' },
    });
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(3000);
    expect(await closed()).toEqual([false]);
  });

  it('a request already read to its end is answered at once', async () => {
    const a = await sendThenRead(port, '/refuse', {}, Buffer.alloc(0), { chunked: false });
    expect(a.status).toBe(413);
    expect(await closed()).toEqual([true]);
  });
});
