import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp } from '../../helpers/app';
import { sendThenRead } from '../../helpers/raw-http';

const LIMIT = 64 * 1024;
const BOUNDARY = 'limit-test-boundary';

/** A multipart body: one .txt file of `size` bytes in the field "file". */
function multipart(size: number): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\nBig file\n`,
    ),
    Buffer.alloc(size, 'a'),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * POSTs `body` with a real HTTP client, in 16 KiB writes as a client streaming a file would,
 * with or without Content-Length, and resolves with whatever answer it could read; rejects when
 * the connection failed before a whole answer came back (ECONNRESET, EPIPE).
 */
function upload(port: number, body: Buffer, opts: { declareLength: boolean }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/upload',
      headers: {
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...(opts.declareLength ? { 'content-length': String(body.length) } : { 'transfer-encoding': 'chunked' }),
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    let pos = 0;
    const pump = () => {
      while (pos < body.length) {
        const chunk = body.subarray(pos, pos + 16 * 1024);
        pos += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('upload over MAX_BODY_SIZE through a real HTTP connection', () => {
  let t: TestApp;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing', maxBodyBytes: LIMIT }, rateLimit: { enabled: false } });
    server = t.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.close();
  });

  const expect413 = (a: Pick<Answer, 'status' | 'body'>) => {
    expect(a.status).toBe(413);
    expect(JSON.parse(a.body)).toMatchObject({
      error: 'payload_too_large',
      message: expect.stringContaining(`${LIMIT} bytes`),
    });
  };

  it.each([
    ['declared in Content-Length (refused before reading)', true, 4 * LIMIT],
    ['declared in Content-Length, 16 MB', true, 256 * LIMIT],
    ['chunked, 16 MB', false, 256 * LIMIT],
    ['found while streaming (chunked, no Content-Length)', false, 4 * LIMIT],
  ])('the client reads the 413 JSON answer: %s', async (_name, declareLength, size) => {
    for (let i = 0; i < 5; i++) expect413(await upload(port, multipart(size), { declareLength }));
  });

  it.each([
    ['declared in Content-Length', true],
    ['chunked', false],
  ])(
    'a client that sends everything before reading still reads the 413 JSON answer: %s, 32 MB',
    async (_name, declareLength) => {
      // 32 MB is more than the loopback socket buffers hold: answering and closing at once made
      // this client fail with EPIPE before it read anything.
      const headers = { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` };
      for (let i = 0; i < 3; i++) {
        const a = await sendThenRead(port, '/api/upload', headers, multipart(512 * LIMIT), { chunked: !declareLength });
        expect413(a);
        // Answered before the body was in: the connection closes once the rest is read off.
        expect(a.headers.connection).toBe('close');
      }
    },
  );

  it('the server is fine afterwards: a small upload is stored', async () => {
    const small = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="ok.txt"\r\n\r\nSmall file\nok\r\n--${BOUNDARY}--\r\n`,
    );
    const a = await upload(port, small, { declareLength: true });
    expect(a.status).toBe(201);
    expect(JSON.parse(a.body)).toMatchObject({ count: 1 });
  });
});
