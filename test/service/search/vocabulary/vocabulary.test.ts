import fc from 'fast-check';
import SearchableMap from 'minisearch/SearchableMap';
import { BoundedDistance } from '../../../../service/search/vocabulary/edit-distance';
import { FuzzyIndex } from '../../../../service/search/vocabulary/fuzzy-index';
import { radixOrder } from '../../../../service/search/vocabulary/radix-order';
import { SortedTerms } from '../../../../service/search/vocabulary/sorted-terms';
import { Vocabulary } from '../../../../service/search/vocabulary/vocabulary';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';
import { cpuMs } from '../../../helpers/cpu-time';

// Words over few units (many shared prefixes and near spellings), some outside ASCII and the BMP.
const unit = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'é', 'ß', '\u{1F600}', '字');
const word = (max: number) => fc.array(unit, { minLength: 0, maxLength: max }).map((l) => l.join(''));
const vocabulary = fc.uniqueArray(word(9), { minLength: 1, maxLength: 150 });
// Short, ordinary and very long query terms (the long ones past Myers' 32 units).
const query = fc.oneof(word(4), word(12), word(40));

/** The Levenshtein distance, the whole matrix. */
function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1), prev[j] + 1, cur[j - 1] + 1);
    prev = cur;
  }
  return prev[b.length];
}

const tree = (terms: readonly string[]) => {
  const t = new SearchableMap<number>();
  terms.forEach((term, i) => t.set(term, i));
  return t;
};

describe('BoundedDistance', () => {
  it(
    'is the Levenshtein distance up to its bound, for short and long queries',
    () => {
      fc.assert(
        fc.property(fc.oneof(word(6), word(40)), fc.oneof(word(6), word(40)), fc.nat(3), (a, b, k) => {
          const d = levenshtein(a, b);
          expect(new BoundedDistance(a, k).distance(b)).toBe(d <= k ? d : k + 1);
        }),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

describe('FuzzyIndex', () => {
  it(
    "finds MiniSearch's fuzzyGet terms at the same distances, at fuzzy 0, 1, 2 and more",
    () => {
      fc.assert(
        fc.property(vocabulary, query, fc.nat(3), (terms, q, k) => {
          const expected = [...tree(terms).fuzzyGet(q, k)].map(([t, [id, d]]) => `${t}:${id}:${d}`).sort();
          const found: string[] = [];
          FuzzyIndex.of(terms).near(q, k, (id, d) => found.push(`${terms[id]}:${id}:${d}`));
          expect(found.sort()).toEqual(expected);
        }),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('covers only the terms it was built over', () => {
    const found: number[] = [];
    FuzzyIndex.of(['abcde', 'abcdf', 'abcdg'], 2).near('abcde', 1, (id) => found.push(id));
    expect(found.sort()).toEqual([0, 1]);
  });
});

describe('radixOrder', () => {
  it(
    "yields a prefix's terms in the radix tree's order",
    () => {
      fc.assert(
        fc.property(vocabulary, word(2), (terms, prefix) => {
          const expected = [...tree(terms).atPrefix(prefix).values()];
          const s = SortedTerms.of(terms);
          const [lo, hi] = s.prefixRange(prefix);
          const found: number[] = [];
          radixOrder(
            terms,
            (i) => s.idAt(i),
            lo,
            hi,
            prefix,
            (id) => (found.push(id), false),
          );
          expect(found).toEqual(expected);
        }),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

describe('Vocabulary', () => {
  it(
    'answers as the radix tree does, built in steps, with terms added after its build scanned',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          vocabulary,
          fc.nat(),
          query,
          fc.nat(2),
          fc.integer({ min: 1, max: 20 }),
          async (terms, cut, q, k, scanLimit) => {
            const grown = terms.slice(0, cut % (terms.length + 1));
            const v = new Vocabulary(grown);
            await v.fill(1);
            grown.push(...terms.slice(grown.length));
            const t = tree(terms);
            const near: string[] = [];
            v.near(q, k, (id, d) => near.push(`${id}:${d}`));
            expect(near.sort()).toEqual([...t.fuzzyGet(q, k).values()].map(([id, d]) => `${id}:${d}`).sort());
            // Prefix matches: the tree's first `scanLimit` counted ones (here: odd ids count).
            const prefix = q.slice(0, 2);
            const expected: number[] = [];
            const all = [...t.atPrefix(prefix).values()];
            if (all.length <= scanLimit) expected.push(...all);
            else
              for (const id of all)
                if ((expected.push(id), id % 2 === 1 && expected.filter((x) => x % 2 === 1).length >= scanLimit)) break;
            const found: number[] = [];
            v.prefixed(prefix, scanLimit, (id) => (found.push(id), id % 2 === 1));
            expect(all.length <= scanLimit ? found.sort() : found).toEqual(
              all.length <= scanLimit ? expected.sort() : expected,
            );
          },
        ),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('rebuilds in the background once too many terms are newer than its structures, answering the same meanwhile', async () => {
    const terms = Array.from({ length: 3000 }, (_v, i) => `w${i.toString(36)}`);
    const v = new Vocabulary(terms);
    const before: number[] = [];
    v.near('w1a', 1, (id) => before.push(id));
    expect(v.covered).toBe(0);
    await v.fill(1);
    expect(v.covered).toBe(3000);
    const after: number[] = [];
    v.near('w1a', 1, (id) => after.push(id));
    expect(after.sort()).toEqual(before.sort());
  });

  it('stays linear in a very long query term', () => {
    const terms = Array.from({ length: 2000 }, (_v, i) => `term${i.toString(36)}x`);
    const v = new Vocabulary(terms);
    const q = 'a'.repeat(100_000);
    const spent = cpuMs(() => {
      let n = 0;
      v.near(q, 2, () => n++);
      v.prefixed(q, 2000, () => (n++, true));
      expect(n).toBe(0);
    });
    expect(spent).toBeLessThan(1000);
  });
});
