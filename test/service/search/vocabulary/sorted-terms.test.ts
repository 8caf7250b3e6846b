import fc from 'fast-check';
import SearchableMap from 'minisearch/SearchableMap';
import { SortedTerms } from '../../../../service/search/vocabulary/sorted-terms';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

// Short words over few letters: many shared prefixes.
const word = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'é'), { minLength: 1, maxLength: 9 }).map((l) => l.join(''));

describe('SortedTerms', () => {
  it(
    "finds a prefix's terms as the radix tree does, built at once or merged in two steps",
    () => {
      fc.assert(
        fc.property(fc.uniqueArray(word, { minLength: 1, maxLength: 120 }), word, fc.nat(), (terms, prefix, cut) => {
          const tree = new SearchableMap<number>();
          terms.forEach((t, i) => tree.set(t, i));
          const expected = [...tree.atPrefix(prefix).keys()].sort();
          for (const s of [
            SortedTerms.of(terms),
            SortedTerms.of(terms, terms.length, SortedTerms.of(terms, cut % (terms.length + 1))),
          ]) {
            const [lo, hi] = s.prefixRange(prefix);
            const found: string[] = [];
            for (let i = lo; i < hi; i++) found.push(terms[s.idAt(i)]);
            expect(found.sort()).toEqual(expected);
          }
        }),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
