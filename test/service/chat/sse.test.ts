import { parseSse, SseEventTooLarge, type SseEvent } from '../../../service/chat/sse';

async function* bytes(...parts: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? new TextEncoder().encode(p) : p;
}

async function all(body: AsyncIterable<Uint8Array>, maxEventBytes?: number): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of parseSse(body, maxEventBytes === undefined ? {} : { maxEventBytes })) out.push(e);
  return out;
}

describe('parseSse', () => {
  it('takes every line end, split anywhere (\\r\\n across chunks, a lone \\r, a \\n)', async () => {
    expect(await all(bytes('data: a\r', '\ndata: b\r\r', 'data: c\n', '\n'))).toEqual([
      { event: 'message', data: 'a\nb' },
      { event: 'message', data: 'c' },
    ]);
  });

  it('keeps a multi-byte character split between chunks, and drops only the leading BOM', async () => {
    const euro = new TextEncoder().encode('data: \u20ac\n\n');
    expect(await all(bytes('\ufeff', euro.subarray(0, 7), euro.subarray(7)))).toEqual([
      { event: 'message', data: '\u20ac' },
    ]);
    expect(await all(bytes('data: x\n\ufeffdata: y\n\n'))).toEqual([{ event: 'message', data: 'x' }]);
  });

  it('dispatches the last event at the end of the body even without its blank line', async () => {
    expect(await all(bytes('event: e\ndata: tail'))).toEqual([{ event: 'e', data: 'tail' }]);
  });

  it('passes an event up to the limit and refuses one past it, a line that never ends included', async () => {
    const line = (n: number) => `data: ${'x'.repeat(n)}\n\n`;
    // A data line counts its bytes and its line end: 1,007 of 1,024 passes, 2,007 does not.
    expect(await all(bytes(line(1000)), 1024)).toHaveLength(1);
    await expect(all(bytes(line(2000)), 1024)).rejects.toBeInstanceOf(SseEventTooLarge);
    // Many data lines of one event add up.
    await expect(all(bytes(`${'data: 0123456789\n'.repeat(200)}\n`), 1024)).rejects.toBeInstanceOf(SseEventTooLarge);
    // Comments are not kept: a stream of them passes, however long, as long as each line is under the limit.
    expect(
      await all(bytes(...Array.from({ length: 1000 }, () => `: ${'c'.repeat(500)}\n`), 'data: ok\n\n'), 1024),
    ).toEqual([{ event: 'message', data: 'ok' }]);
    let pulled = 0;
    async function* endless(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode('data: ');
      const piece = new Uint8Array(4096).fill(0x78);
      for (;;) {
        pulled++;
        yield piece;
      }
    }
    await expect(all(endless(), 64 * 1024)).rejects.toBeInstanceOf(SseEventTooLarge);
    expect(pulled).toBeLessThanOrEqual(17);
  });

  it('reads a long line in linear time: a 16 MB event in 4 KB chunks', async () => {
    const piece = new Uint8Array(4096).fill(0x78);
    async function* big(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode('data: ');
      for (let i = 0; i < 4096; i++) yield piece;
      yield new TextEncoder().encode('\n\n');
    }
    const [e] = await all(big());
    expect(e.data.length).toBe(16 * 1024 * 1024);
  });
});
