import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import { EXPORTS, EXPORT_CHUNK_CHARS, exportChunks, type ExportSpec } from '../../../service/content/export';
import { ITEM_TYPES, stamp, type Item } from '../../../service/content/item';
import { loadDemoContent } from '../../../service/demo/demo-content';
import { errorHandler } from '../../../service/http/errors';
import { exportRouter } from '../../../service/routes/export';
import type { FeatureContext } from '../../../service/routes/context';
import { waitFor } from '../../../tools/harness/ports';
import { legacyRenderExport } from '../../helpers/legacy-export';

/** V8's longest string (2^29 - 24 UTF-16 units on 64-bit): the old whole-string export failed past it. */
const V8_MAX_STRING_LENGTH = 2 ** 29 - 24;

/** What the chunks encode to, each chunk on its own (as `res.write` encodes them). */
function streamedBytes(spec: ExportSpec, items: readonly Item[]): Buffer {
  return Buffer.concat([...exportChunks(spec, items)].map((c) => Buffer.from(c, 'utf8')));
}

function item(id: string, type: Item['type'], extra: Partial<Item> = {}): Item {
  return stamp({ id, type, title: `Title ${id}`, body: `Body of ${id}`, tags: [], ...extra }, Date.UTC(2026, 0, 1));
}

describe('exportChunks: byte for byte what the whole-string export gave', () => {
  const demo = loadDemoContent().map((i, n) => stamp(i, Date.UTC(2026, 0, 1) + n * 1000));
  // Edge cases: chunk boundaries inside surrogate pairs, lone surrogates, newlines in titles and
  // summaries, an item larger than a chunk, every type, an empty corpus.
  const emoji = '😀'.repeat(EXPORT_CHUNK_CHARS);
  const edge: Item[] = [
    item('big', 'article', {
      body: `${'a'.repeat(EXPORT_CHUNK_CHARS - 7)}${emoji}\n\nend`,
      summary: 'line one\nline two',
    }),
    item('odd', 'article', {
      body: `x${emoji}`,
      title: 'title\nwith newline',
      tags: ['t1', 't2'],
      url: '/a',
      date: '2024-01-02',
    }),
    item('lone', 'project', { body: `lone \ud800 high and \udc00 low surrogates ${'é'.repeat(70000)}` }),
    item('exp', 'experience', { body: '   ', summary: 's' }),
  ];

  it.each([...EXPORTS.keys()])(
    '%s: the demo content and the edge cases, in order as the in-memory copy gives them',
    (name) => {
      const spec = EXPORTS.get(name)!;
      for (const corpus of [demo, edge, []]) {
        const items = corpus
          .filter((i) => spec.scope === 'all' || i.type === spec.scope)
          .sort((a, b) => ITEM_TYPES.indexOf(a.type) - ITEM_TYPES.indexOf(b.type));
        const expected = Buffer.from(legacyRenderExport(spec, items), 'utf8');
        expect(streamedBytes(spec, items).equals(expected)).toBe(true);
        for (const c of exportChunks(spec, items)) expect(c.length).toBeLessThanOrEqual(EXPORT_CHUNK_CHARS);
      }
    },
  );
});

/**
 * An app with only the export routes, over an in-memory copy stand-in that returns `items`; `queued`, when
 * given, hears the bytes the answer holds unsent (`res.writableLength`) after each of its writes.
 */
function exportApp(items: () => readonly Item[], logs: string[], queued?: (bytes: number) => void): Promise<Server> {
  const logger = pino({ level: 'info' }, { write: (s: string) => logs.push(s) });
  const ctx = {
    deps: { logger },
    content: { all: items, prepareListing: async () => undefined },
  } as unknown as FeatureContext;
  const app = express();
  if (queued) {
    app.use((_req, res, next) => {
      const write = res.write.bind(res) as (...args: unknown[]) => boolean;
      res.write = ((...args: unknown[]) => {
        const ok = write(...args);
        queued(res.writableLength);
        return ok;
      }) as typeof res.write;
      next();
    });
  }
  app.use(exportRouter(ctx));
  app.use(errorHandler(logger));
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function get(server: Server, path: string): Promise<IncomingMessage> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** Reads a response to its end, keeping only the count and the last bytes; rejects when it aborts. */
function drain(res: IncomingMessage): Promise<{ bytes: number; tail: string; maxChunk: number }> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    let maxChunk = 0;
    let tail = '';
    res.on('data', (c: Buffer) => {
      bytes += c.length;
      maxChunk = Math.max(maxChunk, c.length);
      tail = (tail + c.toString('latin1')).slice(-64);
    });
    res.on('end', () => resolve({ bytes, tail, maxChunk }));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('aborted')));
  });
}

describe('GET /api/export/<name> streams', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) await new Promise((r) => s.close(r));
  });

  it('exports more than the longest string V8 can hold, with bounded memory (the old route answered 500 RangeError)', async () => {
    // 600 items sharing one 1 MB body: 600 MB of export from about 1 MB of content.
    const body = 'lorem ipsum dolor sit amet '.repeat(40_000).slice(0, 1_000_000);
    const items = Array.from({ length: 600 }, (_, i) => item(`item-${i}`, 'article', { body }));
    const logs: string[] = [];
    let mostQueued = 0;
    const server = await exportApp(
      () => items,
      logs,
      (bytes) => (mostQueued = Math.max(mostQueued, bytes)),
    );
    servers.push(server);
    const before = process.memoryUsage();
    let peakRss = before.rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    try {
      const res = await get(server, '/api/export/all.ndjson');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      expect(res.headers['content-disposition']).toBe('attachment; filename="all.ndjson"');
      expect(res.headers['transfer-encoding']).toBe('chunked');
      const got = await drain(res);
      expect(got.bytes).toBeGreaterThan(V8_MAX_STRING_LENGTH);
      expect(got.tail.endsWith('"}\n')).toBe(true);
    } finally {
      clearInterval(sampler);
    }
    // What the service holds unsent is bounded by backpressure: the socket stream's buffer
    // (16 KB) and the chunk whose write filled it (at most 3 bytes a UTF-16 unit), whatever
    // the export's size.
    expect(mostQueued).toBeLessThanOrEqual(16 * 1024 + 3 * EXPORT_CHUNK_CHARS + 1024);
    // The process as a whole: the export held at once would be 600 MB as one string, plus as much
    // again as a Buffer. Peak RSS also counts the chunks already sent but not yet collected, which
    // depends on when the GC runs (52-127 MB alone, 382 MB once beside another jest worker, 641 MB
    // in a CI run at load 7 on two cores), so the bound is what holding the export whole would take
    // (its string and its Buffer, 1.2 GB), less a margin: never the export held whole.
    process.stdout.write(
      `600 MB export: peak RSS growth ${Math.round((peakRss - before.rss) / 2 ** 20)} MB, most queued ${mostQueued} bytes\n`,
    );
    expect(peakRss - before.rss).toBeLessThan(1024 * 1024 * 1024);
  }, 120000);

  it('an error before the first chunk is a normal JSON 500', async () => {
    const bad = item('bad', 'article');
    Object.defineProperty(bad, 'title', {
      enumerable: true,
      get: () => {
        throw new Error('cannot read this item');
      },
    });
    const logs: string[] = [];
    const server = await exportApp(() => [bad], logs);
    servers.push(server);
    const res = await get(server, '/api/export/all.md');
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const text = await new Promise<string>((r) => {
      let s = '';
      res.on('data', (c: Buffer) => (s += c.toString()));
      res.on('end', () => r(s));
    });
    expect(JSON.parse(text)).toEqual({ error: 'internal_error', message: 'an unexpected error occurred' });
  });

  it('an error mid-stream destroys the connection: the client sees an aborted transfer, never a complete-looking one', async () => {
    const good = Array.from({ length: 50 }, (_, i) => item(`good-${i}`, 'article', { body: 'x'.repeat(10_000) }));
    const bad = item('bad', 'article');
    Object.defineProperty(bad, 'title', {
      enumerable: true,
      get: () => {
        throw new Error('cannot read this item');
      },
    });
    const logs: string[] = [];
    const server = await exportApp(() => [...good, bad], logs);
    servers.push(server);
    const res = await get(server, '/api/export/all.md');
    expect(res.statusCode).toBe(200);
    await expect(drain(res)).rejects.toThrow(/aborted/);
    // The log line comes once the server has seen the failure: awaited, not given 50 ms.
    await waitFor('the export failure logged', () => logs.join('').includes('export failed mid-stream'), {
      intervalMs: 5,
    });
  });

  it('stops producing when the client goes away, and says so in the log', async () => {
    let produced = 0;
    const body = 'y'.repeat(200_000);
    const items = new Proxy(
      Array.from({ length: 2000 }, (_, i) => item(`p-${i}`, 'article', { body })),
      {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) produced = Math.max(produced, Number(key) + 1);
          return Reflect.get(target, key, receiver);
        },
      },
    );
    const logs: string[] = [];
    const server = await exportApp(() => items, logs);
    servers.push(server);
    const res = await get(server, '/api/export/all.json');
    await new Promise<void>((r) => res.once('data', () => r()));
    res.destroy();
    // The server says it stopped once it has seen the close: awaited, not given 300 ms.
    await waitFor('the stop logged', () => logs.join('').includes('export stopped: the client closed the connection'), {
      intervalMs: 5,
    });
    // 2,000 items of 200 KB is 400 MB; the export stopped after what the socket buffers held.
    expect(produced).toBeLessThan(200);
  });
});
