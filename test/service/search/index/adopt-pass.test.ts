import type { WeightedTerm } from '../../../../service/search/index/cursor';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { CompactIndex } from '../../../../service/search/index/compact-index';
import type { CompactIndexOptions } from '../../../../service/search/index/index-options';
import type { SealedIndex } from '../../../../service/search/index/merge';
import { scoreTerms } from '../../../../tools/oracles/exhaustive-scorer';
import { bm25, boost } from '../../../helpers/minisearch-twin';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

type Fields = [string[], string[]];

/** Arrays longer than this are compared by their length and a digest, not written out. */
const WRITTEN_OUT = 1000;

/**
 * Every array and list of a sealed index, each as one string, fingerprints apart: short ones
 * written out, long ones as their length and a SHA-1 of their bytes (or of their elements joined,
 * for lists of strings). A comparison of arrays of millions of elements element by element in
 * `toEqual` takes minutes, and writing them out ~2 s of CPU at 70,000 documents.
 */
function contents(s: SealedIndex): Record<string, string> {
  const text = (xs: ArrayLike<unknown>): string => {
    if (xs.length <= WRITTEN_OUT) return Array.prototype.join.call(xs, ',');
    const hash = createHash('sha1');
    if (ArrayBuffer.isView(xs)) hash.update(new Uint8Array(xs.buffer, xs.byteOffset, xs.byteLength));
    else hash.update(Array.prototype.join.call(xs, ','));
    return `${xs.length} elements, sha1 ${hash.digest('hex')}`;
  };
  return {
    fields: text(s.fields),
    ids: text(Array.from({ length: s.ids.length }, (_x, d) => s.ids.get(d))),
    avg: text(s.avg),
    lengths: text(s.lengths),
    fwdStart: text(s.fwdStart),
    fwdTerm: text(s.fwdTerm),
    fwdTf: text(s.fwdTf),
    posField: String(s.posField),
    posStart: text(s.posStart),
    posBytes: text(s.posBytes),
    terms: text(s.terms.slice(0, s.termCount)),
    start: s.start.map(text).join(';'),
    docs: s.docs.map(text).join(';'),
    tfs: s.tfs.map(text).join(';'),
  };
}

/**
 * The answers of each of `terms` alone, from the exhaustive scorer over the index's postings: the
 * ids with their scores (to the bit), ordered by id, as one string.
 */
function answers(c: CompactIndex, terms: readonly string[]): string[] {
  return terms.map((t) => {
    const { ids, scores } = scoreTerms(c.postingsView(), [[t, 1]] as WeightedTerm[], boost, bm25);
    return ids
      .map((id, i) => `${id} ${scores[i]}`)
      .sort()
      .join(',');
  });
}

/** An index built (loaded and sealed) from `final`: the oracle `expectBuiltFrom` holds an index against. */
function builtFrom(final: ReadonlyMap<string, Fields>): CompactIndex {
  const rebuilt = new CompactIndex(['title', 'text'], { positions: 'text' });
  for (const [id, f] of final) rebuilt.load(id, f);
  rebuilt.seal();
  return rebuilt;
}

/**
 * `c` answers (to the bit), holds and positions as an index built from `final` (`rebuilt`, when
 * one is at hand already).
 */
function expectBuiltFrom(
  c: CompactIndex,
  final: ReadonlyMap<string, Fields>,
  terms: readonly string[],
  every = 1,
  rebuilt = builtFrom(final),
) {
  expect(c.documentCount).toBe(final.size);
  expect(answers(c, terms)).toEqual(answers(rebuilt, terms));
  let k = 0;
  for (const [id, [, text]] of final) {
    if (k++ % every !== 0) continue;
    const a = c.shortId(id)!;
    expect(c.externalId(a)).toBe(id);
    expect(c.fieldTerms(a, 'text')).toEqual(rebuilt.fieldTerms(rebuilt.shortId(id)!, 'text'));
    const w = text[0];
    if (w !== undefined)
      expect(c.positions(a, c.postingsView().termId(w)!)).toEqual(text.flatMap((x, i) => (x === w ? [i] : [])));
  }
}

/**
 * A bulk load sealed by a merge that adopts the forward arrays (nothing deleted) against the same
 * load sealed by one that copies them (a document deleted first): the copying merge is the
 * oracle, older and obviously renumbering. Both indexes take `options` (the adopting one's
 * `onSealed` is called as given).
 */
function sealedBothWays(
  docs: ReadonlyArray<readonly [string, Fields]>,
  options: CompactIndexOptions = {},
): {
  adopted: CompactIndex;
  copied: CompactIndex;
  a: SealedIndex;
  b: SealedIndex;
} {
  let a: SealedIndex | undefined;
  let b: SealedIndex | undefined;
  const adopted = new CompactIndex(['title', 'text'], {
    positions: 'text',
    ...options,
    onSealed: (s) => {
      a ??= s;
      options.onSealed?.(s);
    },
  });
  const copied = new CompactIndex(['title', 'text'], { positions: 'text', ...options, onSealed: (s) => (b ??= s) });
  // No terms: the vocabulary's term ids stay those of the adopted index.
  copied.load('deleted first', [[], []]);
  copied.discard('deleted first');
  for (const [id, f] of docs) {
    adopted.load(id, f);
    copied.load(id, f, 7);
  }
  const numbering = [adopted.numbering, copied.numbering];
  adopted.seal();
  copied.seal();
  // The adopting merge renumbers nothing; the copying one does.
  expect([adopted.numbering === numbering[0], copied.numbering === numbering[1]]).toEqual([true, false]);
  return { adopted, copied, a: a!, b: b! };
}

describe('adoptPass: a merge adopting the forward arrays', () => {
  const WORDS = ['laser', 'beam', 'water', 'light', 'bread', 'mirror', 'lasers', 'lase'];
  const fields = fc.tuple(
    fc.array(fc.constantFrom(...WORDS), { maxLength: 3 }),
    fc.array(fc.constantFrom(...WORDS), { maxLength: 12 }),
  );

  it(
    'seals, when nothing below its end is deleted, the index a copying merge seals: the same arrays, the same answers',
    () => {
      fc.assert(
        fc.property(fc.array(fields, { maxLength: 40 }), (fs) => {
          const docs = fs.map((f, i) => [`d${i}`, f] as const);
          const { adopted, copied, a, b } = sealedBothWays(docs);
          expect(contents(a)).toEqual(contents(b));
          expect([...a.fingerprints, ...b.fingerprints]).toEqual([...docs.map(() => 0), ...docs.map(() => 7)]);
          expect(answers(adopted, WORDS)).toEqual(answers(copied, WORDS));
          expectBuiltFrom(adopted, new Map(docs), WORDS);
        }),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it(
    'at a size whose forward arrays grow in place, keeps them through appends and deletes while background merges run',
    async () => {
      // 70,000 documents of 12–16 tokens: `fwdTerm`, `fwdTf` and the positions pass 1 MiB, so the
      // load grows them in place (`grow`), and the merges adopt them.
      let seed = 12345;
      // A global read in a jest suite's context is ~50x slower than a local one: `Math.imul` read
      // twice per call took ~1 s of the ~1.4M calls.
      const { imul } = Math;
      // mulberry32
      const next = () => {
        seed = (seed + 0x6d2b79f5) >>> 0;
        let t = imul(seed ^ (seed >>> 15), 1 | seed);
        t ^= t + imul(t ^ (t >>> 7), 61 | t);
        return (t ^ (t >>> 14)) >>> 0;
      };
      const word = () => `w${next() % 3000}`;
      const make = (): Fields => [
        [word(), word()],
        Array.from({ length: 12 + (next() % 5) }, () => (next() % 4 === 0 ? 'common' : word())),
      ];
      const docs = Array.from({ length: 70_000 }, (_x, i) => [`d${i}`, make()] as const);
      // The adopting index of the two goes on: appends, deletes and merges in the background.
      const sealed: SealedIndex[] = [];
      const {
        adopted: c,
        a,
        b,
      } = sealedBothWays(docs, { minMergeDocs: 1024, mergeSliceMs: 0, onSealed: (s) => sealed.push(s) });
      expect(contents(a)).toEqual(contents(b));
      expect(Object.prototype.toString.call(a.fwdTerm.buffer)).toBe('[object SharedArrayBuffer]');
      const atSeal = { fwdTerm: a.fwdTerm.buffer.byteLength, posBytes: a.posBytes.buffer.byteLength };
      const final = new Map<string, Fields>(docs);
      const numbering = c.numbering;
      const ids = [...final.keys()];
      const add = (i: number) => {
        const f = make();
        c.add(`n${i}`, f);
        final.set(`n${i}`, f);
      };
      const discard = (id: string) => {
        expect(c.discard(id)).toBe(true);
        final.delete(id);
      };
      // Appends of an eighth of the documents start a merge in the background (the 10,000th: 80,000
      // live), which adopts (nothing is deleted).
      let i = 0;
      while (i < 10_000) add(i++);
      const end = c.idLimit;
      // While it runs: appends, and deletes below its end (base and appended) and past it.
      for (let k = 0; k < 600; k++) add(i++);
      for (let k = 0; k < 300; k++) discard(ids[k * 211]);
      discard('n5');
      for (let k = 0; k < 40; k++) discard(`n${i - 1 - k * 7}`);
      expect(sealed).toHaveLength(1);
      await c.merged();
      expect(sealed).toHaveLength(2);
      // Adopted: every document kept its short id, the deleted below the end are tombstones of it.
      expect(c.numbering).toBe(numbering);
      expect(sealed[1].ids.length).toBe(end);
      expect(c.idLimit).toBe(end + 600);
      // One buffer through the load and both merges: grown in place, never copied.
      expect(sealed[1].fwdTerm.buffer).toBe(sealed[0].fwdTerm.buffer);
      expect(sealed[1].posBytes.buffer).toBe(sealed[0].posBytes.buffer);
      expect(sealed[1].fwdTerm.buffer.byteLength).toBeGreaterThan(atSeal.fwdTerm);
      expect(sealed[1].posBytes.buffer.byteLength).toBeGreaterThan(atSeal.posBytes);
      // Each term once: n3's text holds 'common' several times, each an answer over most documents.
      const terms = [...new Set(['common', 'w1', 'w17', 'w2999', ...final.get('n3')![1]])];
      const rebuilt = builtFrom(final);
      expectBuiltFrom(c, final, terms, 97, rebuilt);
      // A checkpoint now copies (documents below its end are deleted) and renumbers them.
      c.checkpoint();
      await c.merged();
      expect(sealed).toHaveLength(3);
      expect(c.numbering).not.toBe(numbering);
      expect(sealed[2].ids.length).toBe(final.size);
      expectBuiltFrom(c, final, terms, 97, rebuilt);
      // Appends after the copy go into its room, then grow its arrays in place.
      for (let k = 0; k < 10_000; k++) add(i++);
      expectBuiltFrom(c, final, terms, 97);
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
