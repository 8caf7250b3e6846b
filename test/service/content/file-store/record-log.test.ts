import fc from 'fast-check';
import { decodeRecords, encodeRecord, encodeRecordInSteps } from '../../../../service/content/file-store/record-log';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

const recs = (...values: unknown[]) => values.map((v) => encodeRecord(v));

describe('record framing', () => {
  it('round-trips records, with no damage and no torn tail', () => {
    const [a, b] = recs({ n: 1 }, { n: 2, s: 'é\nline' });
    expect(decodeRecords(Buffer.concat([a!, b!]))).toEqual({
      records: [{ n: 1 }, { n: 2, s: 'é\nline' }],
      damaged: [],
      keepBytes: a!.length + b!.length,
      torn: false,
    });
    expect(decodeRecords(Buffer.alloc(0))).toEqual({ records: [], damaged: [], keepBytes: 0, torn: false });
  });

  it('cuts only a torn tail: the bytes after the last newline', () => {
    const [a, b] = recs({ n: 1 }, { n: 2 });
    const torn = decodeRecords(Buffer.concat([a!, b!.subarray(0, b!.length - 3)]));
    expect(torn).toEqual({ records: [{ n: 1 }], damaged: [], keepBytes: a!.length, torn: true });
  });

  it('skips a record with a flipped byte and keeps every record after it, naming the damaged range', () => {
    const [a, b, c] = recs({ n: 1 }, { n: 2 }, { n: 3 });
    const buf = Buffer.concat([a!, b!, c!]);
    buf[a!.length + b!.length - 4]! ^= 0x01;
    expect(decodeRecords(buf)).toEqual({
      records: [{ n: 1 }, { n: 3 }],
      damaged: [{ start: a!.length, end: a!.length + b!.length }],
      keepBytes: buf.length,
      torn: false,
    });
  });

  it('resynchronizes after garbage at the start, a damaged terminator and a damaged length', () => {
    const [a, b, c] = recs({ n: 1 }, { n: 2 }, { n: 3 });
    const garbage = Buffer.from('\u0000\u0000garbage 12 9 {"x"');
    const noTerminator = Buffer.from(a!);
    noTerminator[noTerminator.length - 1] = 0x41;
    const badLength = Buffer.from(c!);
    badLength[0] = 0x39;
    const decoded = decodeRecords(Buffer.concat([garbage, noTerminator, b!, badLength, a!]));
    expect(decoded.records).toEqual([{ n: 2 }, { n: 1 }]);
    expect(decoded.damaged).toEqual([
      { start: 0, end: garbage.length + a!.length },
      { start: garbage.length + a!.length + b!.length, end: garbage.length + a!.length + b!.length + c!.length },
    ]);
  });

  it(
    'property: random damage inside one record never loses any other record',
    () => {
      const record = fc.record({ id: fc.string(), n: fc.integer(), tags: fc.array(fc.string(), { maxLength: 3 }) });
      const damage = fc.oneof(
        fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
        fc.record({
          kind: fc.constant('overwrite' as const),
          at: fc.nat(),
          bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }),
        }),
        fc.record({
          kind: fc.constant('truncate-inside' as const),
          at: fc.nat(),
          bytes: fc.uint8Array({ maxLength: 8 }),
        }),
      );
      fc.assert(
        fc.property(fc.array(record, { minLength: 2, maxLength: 12 }), fc.nat(), damage, (generated, which, d) => {
          // Numbered, so that no other record equals the damaged one.
          const values = generated.map((v, i) => ({ ...v, i }));
          const frames = values.map((v) => encodeRecord(v));
          const victim = which % frames.length;
          const f = Buffer.from(frames[victim]!);
          const at = d.at % f.length;
          let broken: Buffer;
          if (d.kind === 'flip') {
            f[at]! ^= 1 << d.bit;
            broken = f;
          } else if (d.kind === 'overwrite') {
            broken = Buffer.concat([
              f.subarray(0, at),
              Buffer.from(d.bytes),
              f.subarray(Math.min(f.length, at + d.bytes.length)),
            ]).subarray(0, f.length);
          } else {
            // Part of the record replaced by other bytes (it is shorter or longer than it says).
            broken = Buffer.concat([f.subarray(0, at), Buffer.from(d.bytes)]);
          }
          const buf = Buffer.concat([...frames.slice(0, victim), broken, ...frames.slice(victim + 1)]);
          const decoded = decodeRecords(buf);
          const others = values.filter((_, i) => i !== victim);
          const kept = decoded.records.filter((r) => JSON.stringify(r) !== JSON.stringify(values[victim]));
          expect(kept).toEqual(others);
          // What was dropped lies inside the damaged record's bytes.
          const start = frames.slice(0, victim).reduce((n, x) => n + x.length, 0);
          for (const r of decoded.damaged) {
            expect(r.start).toBeGreaterThanOrEqual(start);
            expect(r.end).toBeLessThanOrEqual(start + broken.length);
          }
          if (decoded.torn) expect(decoded.keepBytes).toBeGreaterThanOrEqual(start);
        }),
        { numRuns: 500 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

describe('encodeRecordInSteps', () => {
  it(
    'gives the bytes encodeRecord gives, a step after each element of a top-level array',
    async () => {
      const record = {
        op: 'put',
        skipped: undefined,
        items: [
          { id: 'a', body: 'naïve "quoted" \u2028 text', tags: [] },
          { id: 'b', n: 1.5, nested: { x: [1, null] } },
          undefined,
        ],
        plain: ['x', null],
        empty: [],
        plain_text_version: 1,
      };
      let steps = 0;
      const bytes = await encodeRecordInSteps(record, () => {
        steps++;
        return undefined;
      });
      expect(bytes.equals(encodeRecord(record))).toBe(true);
      expect(steps).toBe(5);
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(fc.string(), fc.oneof(fc.jsonValue(), fc.array(fc.jsonValue()))),
          async (value) => {
            expect((await encodeRecordInSteps(value, () => undefined)).equals(encodeRecord(value))).toBe(true);
          },
        ),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('gives the same bytes for a record of many 64 K chunks of multi-byte text (its UTF-8 and CRC taken a chunk at a time)', async () => {
    const text = (i: number) => `${i} é€😀 \ud800 "q" \u2028 ${'x'.repeat(i % 97)}`;
    const record = {
      op: 'put',
      items: Array.from({ length: 6000 }, (_, i) => ({
        id: `item-${i}`,
        title: text(i),
        tags: Array.from({ length: 10 }, (_, j) => text(i + j)),
      })),
      plain: Array.from({ length: 6000 }, (_, i) => (i % 3 ? null : text(i))),
      plain_text_version: 2,
    };
    const whole = encodeRecord(record);
    // Several chunks, so the CRC is carried across chunk boundaries.
    expect(whole.length).toBeGreaterThan(10 * 64 * 1024);
    expect((await encodeRecordInSteps(record, () => undefined)).equals(whole)).toBe(true);
    expect(decodeRecords(whole).records).toEqual([JSON.parse(JSON.stringify(record))]);
  });
});
