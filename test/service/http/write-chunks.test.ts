import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { writeChunks, type StreamResult } from '../../../service/http/write-chunks';

/** A server whose one route streams `chunks()` with `writeChunks` and reports how it ended. */
function streamingServer(
  chunks: () => Iterator<string>,
  opts: { stallMs?: number },
  ended: (r: StreamResult) => void,
): Promise<Server> {
  const app = express();
  app.get('/stream', async (_req, res) => {
    res.set('Content-Type', 'text/plain; charset=utf-8');
    ended(await writeChunks(res, chunks(), opts));
  });
  return new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
}

function open(server: Server): Promise<IncomingMessage> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/stream', agent: false }, resolve);
    req.on('error', reject);
    req.end();
  });
}

function* endless(): Generator<string> {
  const chunk = 'z'.repeat(64 * 1024);
  for (;;) yield chunk;
}

describe('writeChunks', () => {
  it('destroys the connection of a client that reads nothing for stallMs (outcome stalled)', async () => {
    let result: StreamResult | undefined;
    const server = await streamingServer(endless, { stallMs: 300 }, (r) => (result = r));
    try {
      const res = await open(server);
      await new Promise<void>((r) => res.once('data', () => r()));
      res.pause();
      const closed = new Promise<void>((r) => res.socket.once('close', () => r()));
      const started = Date.now();
      while (!result && Date.now() - started < 10000) await new Promise((r) => setTimeout(r, 20));
      expect(result?.outcome).toBe('stalled');
      // The producer stopped at what the socket buffers held: far from endless.
      expect(result!.chunks).toBeLessThan(2000);
      res.resume();
      await closed;
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('writes everything and ends for a client that reads (outcome complete)', async () => {
    let result: StreamResult | undefined;
    const parts = ['a'.repeat(100_000), 'é'.repeat(70_000), '😀'];
    const server = await streamingServer(
      () => parts[Symbol.iterator](),
      {},
      (r) => (result = r),
    );
    try {
      const res = await open(server);
      const body = await new Promise<string>((resolve) => {
        const got: Buffer[] = [];
        res.on('data', (c: Buffer) => got.push(c));
        res.on('end', () => resolve(Buffer.concat(got).toString('utf8')));
      });
      expect(body).toBe(parts.join(''));
      expect(result).toEqual({ outcome: 'complete', chunks: 3, chars: parts.join('').length });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
