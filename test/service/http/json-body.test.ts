import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jsonBody } from '../../../service/http/json-body';

/** An app that answers with what the parser left in `req.body` (or the parser's error status). */
async function serve(parser: RequestHandler) {
  const app = express();
  app.use(parser);
  app.all('/echo', (req, res) => {
    res.json({ hasBody: 'body' in req && req.body !== undefined, body: req.body as unknown });
  });
  const onError: ErrorRequestHandler = (err: { status?: number; type?: string }, _req, res, _next) => {
    res.status(err.status ?? 500).json({ error: err.type ?? 'error' });
  };
  app.use(onError);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

interface Case {
  readonly name: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  /** Written in this many chunks (`Transfer-Encoding: chunked` when no Content-Length is set). */
  readonly chunks: readonly string[];
}

const CASES: readonly Case[] = [
  { name: 'GET without a body', method: 'GET', headers: {}, chunks: [] },
  { name: 'DELETE without a body', method: 'DELETE', headers: {}, chunks: [] },
  {
    name: 'POST of JSON with Content-Length',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    chunks: ['{"a":1}'],
  },
  {
    name: 'POST of JSON, chunked',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    chunks: ['{"a":', '[1,2]}'],
  },
  {
    name: 'POST of +json',
    method: 'POST',
    headers: { 'content-type': 'application/vnd.x+json' },
    chunks: ['{"b":true}'],
  },
  {
    name: 'POST with Content-Length 0',
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': '0' },
    chunks: [],
  },
  { name: 'POST of broken JSON', method: 'POST', headers: { 'content-type': 'application/json' }, chunks: ['{"a":'] },
  {
    name: 'POST over the limit',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    chunks: [JSON.stringify({ s: 'x'.repeat(200) })],
  },
  { name: 'POST of text (not parsed)', method: 'POST', headers: { 'content-type': 'text/plain' }, chunks: ['hello'] },
  {
    name: 'GET with a JSON body',
    method: 'GET',
    headers: { 'content-type': 'application/json' },
    chunks: ['{"q":"x"}'],
  },
];

function send(port: number, c: Case): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { ...c.headers };
    if (c.chunks.length === 1 && headers['content-length'] === undefined)
      headers['content-length'] = String(Buffer.byteLength(c.chunks[0]));
    const req = httpRequest({ host: '127.0.0.1', port, method: c.method, path: '/echo', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    for (const chunk of c.chunks) req.write(chunk);
    req.end();
  });
}

describe('jsonBody', () => {
  const LIMIT = 100;
  let ours: Awaited<ReturnType<typeof serve>>;
  let plain: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    ours = await serve(jsonBody(LIMIT));
    plain = await serve(express.json({ limit: LIMIT, type: ['application/json', 'application/*+json'] }));
  });
  afterAll(async () => {
    await ours.close();
    await plain.close();
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s: the same outcome as express.json', async (_name, c) => {
    expect(await send(ours.port, c)).toEqual(await send(plain.port, c));
  });

  it('leaves a bodiless request without a body and parses the rest', async () => {
    expect(JSON.parse((await send(ours.port, CASES[0])).body)).toEqual({ hasBody: false });
    expect(JSON.parse((await send(ours.port, CASES[3])).body)).toEqual({ hasBody: true, body: { a: [1, 2] } });
    expect((await send(ours.port, CASES[6])).status).toBe(400);
    expect((await send(ours.port, CASES[7])).status).toBe(413);
  });
});
