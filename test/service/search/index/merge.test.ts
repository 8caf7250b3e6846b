import type { WeightedTerm } from '../../../../service/search/index/cursor';
import fc from 'fast-check';
import { CompactIndex } from '../../../../service/search/index/compact-index';
import type { SealedIndex } from '../../../../service/search/index/merge';
import { scoreTerms } from '../../../../tools/oracles/exhaustive-scorer';
import { bm25, boost } from '../../../helpers/minisearch-twin';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

type Fields = [string[], string[]];

/**
 * Every array and list of a sealed index, each as one string (a comparison of arrays of millions
 * of elements element by element in `toEqual` takes minutes), fingerprints apart.
 */
function contents(s: SealedIndex): Record<string, string> {
  const text = (xs: ArrayLike<unknown>) => Array.prototype.join.call(xs, ',');
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

/** `c` answers (to the bit), holds and positions as an index built (loaded and sealed) from `final`. */
function expectBuiltFrom(c: CompactIndex, final: ReadonlyMap<string, Fields>, terms: readonly string[], every = 1) {
  const rebuilt = new CompactIndex(['title', 'text'], { positions: 'text' });
  for (const [id, f] of final) rebuilt.load(id, f);
  rebuilt.seal();
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
 * oracle, older and obviously renumbering.
 */
function sealedBothWays(docs: ReadonlyArray<readonly [string, Fields]>): {
  adopted: CompactIndex;
  copied: CompactIndex;
  a: SealedIndex;
  b: SealedIndex;
} {
  let a: SealedIndex | undefined;
  let b: SealedIndex | undefined;
  const adopted = new CompactIndex(['title', 'text'], { positions: 'text', onSealed: (s) => (a = s) });
  const copied = new CompactIndex(['title', 'text'], { positions: 'text', onSealed: (s) => (b = s) });
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

describe('mergeJob adopting the forward arrays', () => {
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
      // mulberry32
      const next = () => {
        seed = (seed + 0x6d2b79f5) >>> 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
        return (t ^ (t >>> 14)) >>> 0;
      };
      const word = () => `w${next() % 3000}`;
      const make = (): Fields => [
        [word(), word()],
        Array.from({ length: 12 + (next() % 5) }, () => (next() % 4 === 0 ? 'common' : word())),
      ];
      const docs = Array.from({ length: 70_000 }, (_x, i) => [`d${i}`, make()] as const);
      const { a, b } = sealedBothWays(docs);
      expect(contents(a)).toEqual(contents(b));
      expect(Object.prototype.toString.call(a.fwdTerm.buffer)).toBe('[object SharedArrayBuffer]');

      const sealed: SealedIndex[] = [];
      const c = new CompactIndex(['title', 'text'], {
        positions: 'text',
        minMergeDocs: 1024,
        mergeSliceMs: 0,
        onSealed: (s) => sealed.push(s),
      });
      const final = new Map<string, Fields>();
      for (const [id, f] of docs) {
        c.load(id, f);
        final.set(id, f);
      }
      c.seal();
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
      const terms = ['common', 'w1', 'w17', 'w2999', ...final.get('n3')![1]];
      expectBuiltFrom(c, final, terms, 97);
      // A checkpoint now copies (documents below its end are deleted) and renumbers them.
      c.checkpoint();
      await c.merged();
      expect(sealed).toHaveLength(3);
      expect(c.numbering).not.toBe(numbering);
      expect(sealed[2].ids.length).toBe(final.size);
      expectBuiltFrom(c, final, terms, 97);
      // Appends after the copy go into its room, then grow its arrays in place.
      for (let k = 0; k < 10_000; k++) add(i++);
      expectBuiltFrom(c, final, terms, 97);
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
