import { once } from 'node:events';
import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { parseJsonArrayInSteps } from '../../../service/content/parse/json-array-steps';
import { FileParseError, parseFile, parseFileInSteps } from '../../../service/content/parse/parse-files';
import { MAX_UPLOAD_ITEMS, uploadedItems, utf8Pieces, type Received } from '../../../service/routes/upload';
import { monitorEventLoop } from '../../../service/metrics/event-loop-delay';
import { stepper } from '../../../service/lib/yield-to-loop';
import { buildTestApp, type TestApp } from '../../helpers/app';

/**
 * Issue 37, row 8: an upload of 10,000 items (the documented maximum) with 50 tags each held the
 * event loop 1.07-1.44 s in one step; ingest-batch validates an item at a time in steps
 * (service/lib/yield-to-loop.ts). The upload now does the same: asserted structurally (a step after every
 * parsed element and every validated item, the answer streamed) and the validation measured once
 * inside the process.
 */

/** `n` items with 50 tags each, as an upload file holds them. */
function manyItems(n: number): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ({
    type: 'article',
    title: `Item ${i}`,
    body: `Body of item ${i}: the laser crosses the bench.`,
    tags: Array.from({ length: 50 }, (_, j) => `tag-${i % 500}-${j}`),
  }));
}

/** A step that never pauses and counts its calls. */
function countingStep(): { step: () => undefined; calls: () => number } {
  let calls = 0;
  return {
    step: () => {
      calls += 1;
      return undefined;
    },
    calls: () => calls,
  };
}

describe('upload validation in steps', () => {
  // The count of steps is per element and per item, whatever the size: 2,000 items show it (the
  // maximum, 10,000, is parsed below in the in-process measure, and through the real process in
  // test/hostile/prompt-dates-refusals.test.ts).
  const N = 2_000;
  const items = manyItems(N);

  it.each([
    ['a .json array', 'many.json', 'json', JSON.stringify(items)],
    ['an .ndjson file', 'many.ndjson', 'ndjson', items.map((i) => JSON.stringify(i)).join('\n')],
  ] as const)(
    'steps after every element parsed and every item validated, for %s of 2,000 items',
    async (_name, name, format, text) => {
      const counter = countingStep();
      const received: Received = { files: [{ name, format, data: [Buffer.from(text)] }] };
      const out = await uploadedItems(received, counter.step);
      expect(out).toHaveLength(N);
      expect(out[N - 1]).toMatchObject({ id: `item-${N - 1}`, title: `Item ${N - 1}` });
      // One step per element parsed and one per item validated: no run of work between two steps
      // spans more than one item (plus, for .json, 64 KB of the scan for element boundaries).
      expect(counter.calls()).toBeGreaterThanOrEqual(2 * N);
    },
  );

  it('parses a JSON array in steps, whole or in pieces, to exactly what JSON.parse gives, or leaves it to JSON.parse', async () => {
    const same = async (text: string) => {
      let whole: unknown;
      try {
        whole = JSON.parse(text);
      } catch {
        whole = 'error';
      }
      const stepped = await parseJsonArrayInSteps(text, () => undefined);
      if (stepped !== undefined) expect(stepped).toEqual(whole);
      // The same text in pieces (as an upload's is decoded), cut anywhere: inside strings,
      // escapes, elements, between them.
      for (const size of [1, 2, 3, 7]) {
        const pieces = Array.from({ length: Math.ceil(text.length / size) }, (_, i) =>
          text.slice(i * size, (i + 1) * size),
        );
        expect(await parseJsonArrayInSteps(pieces, () => undefined)).toEqual(stepped);
      }
      // Every valid array is parsed in steps (nothing large falls back to one parse).
      if (Array.isArray(whole)) expect(stepped).toBeDefined();
    };
    for (const t of [
      '[]',
      ' [ ] ',
      '[1,]',
      '[,1]',
      '[1 2]',
      '[{"a":"]"},"\\"",[1,[2]]]',
      '[1] x',
      '[{]}',
      '[[}, {]]',
      '{"items":[1]}',
      '"x"',
      '[',
      '["a\\\\"]',
    ]) {
      await same(t);
    }
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue()), fc.constantFrom('', ' ', '\n', '\t '), async (values, ws) => {
        await same(`${ws}[${values.map((v) => `${ws}${JSON.stringify(v)}${ws}`).join(',')}]${ws}`);
      }),
      { numRuns: 500, seed: 37 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: fc.constantFrom('[', ']', '{', '}', ',', '"', '\\', '1', ' ', ':', 'a') }),
        async (t) => same(`[${t}`),
      ),
      { numRuns: 2000, seed: 37 },
    );
  }, 300_000); // a hang guard only: the runs are bounded by numRuns

  it('parses an .ndjson file cut into pieces anywhere to what parseFile gives, errors and their lines included', async () => {
    /** The items, or the error's message and line. */
    const outcome = async (parse: () => unknown[] | Promise<unknown[]>): Promise<unknown> => {
      try {
        return await parse();
      } catch (e) {
        if (!(e instanceof FileParseError)) throw e;
        return { error: e.message, line: e.line };
      }
    };
    const line = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.constantFrom('', ' ', '{', 'x', '\r', '"\\n"'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n', '\r', '\n\n', '')), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (bom, lines, cuts) => {
          const text = (bom ? '\uFEFF' : '') + lines.map(([l, eol]) => l + eol).join('');
          const at = [0, ...cuts.map((c) => c % (text.length + 1)).sort((a, b) => a - b), text.length];
          const pieces = at.slice(1).map((end, i) => text.slice(at[i], end));
          const stepped = await outcome(() =>
            parseFileInSteps(
              'a.ndjson',
              'ndjson',
              () => pieces,
              () => undefined,
            ),
          );
          expect(stepped).toEqual(await outcome(() => parseFile('a.ndjson', 'ndjson', text)));
        },
      ),
      { numRuns: 2000, seed: 37 },
    );
  }, 300_000); // a hang guard only: the runs are bounded by numRuns

  it('leaves an array of more elements than an upload takes to one JSON.parse (no call per tiny element)', async () => {
    const text = `[${'1,'.repeat(20)}1]`;
    expect(await parseJsonArrayInSteps(text, () => undefined, 21)).toHaveLength(21);
    expect(await parseJsonArrayInSteps(text, () => undefined, 20)).toBeUndefined();
  });

  it('gives the same items as parseFile', async () => {
    const text = JSON.stringify(items.slice(0, 50));
    const counter = countingStep();
    const out = await uploadedItems(
      { files: [{ name: 'a.json', format: 'json', data: [Buffer.from(text)] }] },
      counter.step,
    );
    expect(out.map((i) => i.title)).toEqual(
      (parseFile('a.json', 'json', text) as Array<{ title: string }>).map((i) => i.title),
    );
  });
});

describe('POST /api/upload of many items with 50 tags each, measured inside the process', () => {
  let t: TestApp;
  let server: Server;
  beforeAll(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
    server = t.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterAll(async () => {
    server.close();
    await t.close();
  });

  /** POSTs `body` and collects the answer's bytes (parsed later, outside the measured window). */
  function post(
    body: Buffer,
    contentType: string,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; bytes: Buffer }> {
    const { port } = server.address() as AddressInfo;
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/upload',
          headers: { 'content-type': contentType, 'content-length': body.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('validates them in steps: the longest step of the event loop, measured in-process', async () => {
    const file = Buffer.from(JSON.stringify(manyItems(MAX_UPLOAD_ITEMS)));
    const loop = monitorEventLoop(5);
    loop.take();
    const out = await uploadedItems({ files: [{ name: 'many.json', format: 'json', data: [file] }] }, stepper());
    const held = loop.take();
    loop.stop();
    expect(out).toHaveLength(MAX_UPLOAD_ITEMS);
    // Before issue 37 the parse and validation of these items was one step of ~1 s on a quiet
    // machine (most of the 1.07-1.44 s the process's own event_loop_delay_max showed for the
    // upload). Now a step is the 5 ms budget plus one element or item; what remains is GC and the
    // scheduler: up to ~150 ms of delay seen with the machine's load at 5 on 2 cores. Judged in
    // the CPU time of the longest stall (a core this worker waited for does not count), 500 ms
    // still fails the single step it guards against.
    expect(held.busyMax * 1000).toBeLessThan(500);
  }, 120_000);

  it('stores them and answers 201, streamed an item at a time', async () => {
    // 2,000 items show the answer streamed and whole; the 10,000 are stored and answered through
    // the real process in test/hostile/prompt-dates-refusals.test.ts, its stall measured there.
    const n = 2_000;
    const boundary = 'upload-steps-boundary';
    const file = JSON.stringify(manyItems(n));
    const body = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="many.json"\r\nContent-Type: application/json\r\n\r\n${file}\r\n--${boundary}--\r\n`,
    );
    const res = await post(body, `multipart/form-data; boundary=${boundary}`);
    expect(res.status).toBe(201);
    // Streamed (writeChunks): `res.json` of the 10,000 stored items was one 135 ms step. The
    // whole request's stall is measured by the process's own metric in
    // test/hostile/prompt-dates-refusals.test.ts (the store's one atomic write goes in steps too).
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const answer = JSON.parse(res.bytes.toString('utf8')) as {
      count: number;
      items: Array<{ id: string; tags: string[] }>;
    };
    expect(answer.count).toBe(n);
    expect(answer.items).toHaveLength(n);
    expect(answer.items[n - 1]).toMatchObject({ id: `item-${n - 1}` });
    expect(answer.items[0].tags).toHaveLength(50);
  }, 120_000);
});

describe('utf8Pieces', () => {
  it('decodes to exactly what toString gives, whatever piece or slice a character or a bad byte is cut at', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.string({ unit: 'binary', maxLength: 32 }).map((s) => new Uint8Array(Buffer.from(`\uFEFF${s}`, 'utf8'))),
    );
    fc.assert(
      fc.property(
        bytes,
        fc.array(fc.nat(64), { maxLength: 4 }),
        fc.integer({ min: 1, max: 9 }),
        (data, cuts, slice) => {
          // The bytes as received: cut into pieces at `cuts`.
          const at = [0, ...cuts.map((c) => Math.min(c, data.length)).sort((a, b) => a - b), data.length];
          const received = at.slice(1).map((end, i) => data.subarray(at[i], end));
          const pieces = [...utf8Pieces(received, slice)];
          expect(pieces.join('')).toBe(Buffer.from(data).toString('utf8'));
          // A piece per slice of each received piece.
          expect(pieces).toHaveLength(received.reduce((n, r) => n + Math.ceil(r.length / slice), 0));
        },
      ),
      { numRuns: 3000, seed: 37 },
    );
  }, 300_000); // a hang guard only: the runs are bounded by numRuns
});
