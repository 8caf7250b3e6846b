import fc from 'fast-check';
import { ShortWriteError, writeAll, type WritableFile } from '../../../service/lib/write-all';

/**
 * A fake file that takes at most the next of `counts` bytes per `write` (then whatever is asked),
 * or throws `fail` once `capacity` bytes are in: what a disk that fills mid-write does.
 */
class FakeFile implements WritableFile {
  readonly bytes: number[] = [];
  readonly calls: Array<{ offset: number; length: number; position: number | null | undefined }> = [];
  /** Bytes each write took. */
  readonly took: number[] = [];
  private pos = 0;

  constructor(
    private readonly counts: number[],
    private readonly capacity = Infinity,
  ) {}

  async write(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position?: number | null,
  ): Promise<{ bytesWritten: number }> {
    this.calls.push({ offset, length, position });
    const room = this.capacity - this.bytes.length;
    if (room <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const want = this.counts.length ? Math.min(length, this.counts.shift()!) : length;
    const n = Math.min(want, room);
    const at = position ?? this.pos;
    for (let i = 0; i < n; i++) this.bytes[at + i] = buffer[offset + i];
    this.pos = at + n;
    this.took.push(n);
    return { bytesWritten: n };
  }
}

describe('writeAll', () => {
  it('writes every byte however short each write is (a property over data and partial counts)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 40 }),
        async (data, counts) => {
          const file = new FakeFile(counts);
          await writeAll(file, data);
          expect(Uint8Array.from(file.bytes)).toEqual(data);
          // Each write asks for the rest, from where the last one stopped.
          let at = 0;
          for (const [k, c] of file.calls.entries()) {
            expect(c).toEqual({ offset: at, length: data.length - at, position: null });
            at += file.took[k];
          }
          expect(at).toBe(data.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('asks for the rest after a short count, and throws the error of the write that finds the disk full', async () => {
    const file = new FakeFile([], 10);
    const data = Buffer.from('0123456789abcdef');
    await expect(writeAll(file, data)).rejects.toMatchObject({ code: 'ENOSPC' });
    // The first write took 10 of 16 bytes (a short count, no error); the second threw.
    expect(file.calls).toEqual([
      { offset: 0, length: 16, position: null },
      { offset: 10, length: 6, position: null },
    ]);
    expect(Buffer.from(file.bytes).toString()).toBe('0123456789');
  });

  it('advances an explicit position with each part', async () => {
    const file = new FakeFile([3, 2]);
    await writeAll(file, Buffer.from('abcdefgh'), 100);
    expect(file.calls.map((c) => c.position)).toEqual([100, 103, 105]);
    expect(Buffer.from(file.bytes.slice(100)).toString()).toBe('abcdefgh');
  });

  it('throws ShortWriteError when a write takes nothing without an error, instead of looping', async () => {
    const file = new FakeFile([4, 0]);
    const err = await writeAll(file, Buffer.from('abcdefgh')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShortWriteError);
    expect(err).toMatchObject({ code: 'ESHORTWRITE', written: 4, length: 8 });
  });

  it('writes nothing for an empty buffer', async () => {
    const file = new FakeFile([]);
    await writeAll(file, new Uint8Array(0));
    expect(file.calls).toEqual([]);
  });
});
