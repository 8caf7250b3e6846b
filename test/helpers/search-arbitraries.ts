import fc from 'fast-check';
import type { Item } from '../../service/content/item';
import type { IndexQuery } from '../../service/search/search-index';

/*
 * Generators shared by the search index's property tests against the exhaustive oracle
 * (test/service/search/scoring/max-score.test.ts, test/service/search/exact-after-deletes.test.ts):
 * a small vocabulary, so documents share terms and ties are common, and queries over it with
 * prefix fragments and near spellings, filters and pages.
 */

/** The vocabulary of generated documents. */
export const WORDS = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'zeta',
  'theta',
  'kappa',
  'lambda',
  'sigma',
  'omega',
  'photon',
  'proton',
  'neutron',
];

/** Tags of generated documents (few, so the tag filter keeps some and drops others). */
export const TAGS = ['x', 'y'] as const;

/** A query over `WORDS`: prefix fragments and a near spelling too, a page, and sometimes a type or a tag filter. */
export const searchQuery: fc.Arbitrary<Omit<IndexQuery, 'snippets'>> = fc
  .record({
    text: fc
      .array(fc.constantFrom(...WORDS, 'phot', 'neutr', 'gamm', 'sigmo'), { minLength: 1, maxLength: 8 })
      .map((w) => w.join(' ')),
    limit: fc.integer({ min: 1, max: 12 }),
    offset: fc.integer({ min: 0, max: 5 }),
    type: fc.option(fc.constantFrom<Item['type']>('article', 'project'), { nil: undefined }),
    tag: fc.option(fc.constantFrom(...TAGS), { nil: undefined }),
  })
  .map(({ type, tag, ...q }) => ({
    ...q,
    filter: { ...(type ? { type: [type] } : {}), ...(tag ? { tag: [tag] } : {}) },
  }));
