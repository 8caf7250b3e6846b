import { DEFAULT_SEARCH } from '../../../configs';
import { DEFAULT_RANKING, RANKING_CONSTANTS, rankingOptions } from '../../../service/search/ranking';

describe('ranking options: one source', () => {
  it('the defaults are the settings module defaults joined with the constants (tuned on Vaswani, checked on the Debian known-item collection)', () => {
    expect(DEFAULT_RANKING).toEqual({
      bm25: { k1: 0.6, b: 0.6, delta: 1 },
      boost: { title: 0.2, tags: 0.5, text: 1 },
      coordination: false,
      shortQueryTerms: 2,
      prefixMinLength: 3,
      fuzzyMinLength: 5,
      expansion: { enabled: true, fbDocs: 5, fbTerms: 40, originalWeight: 0.5, minDocs: 50 },
      proximity: { weight: 4, window: 4, depth: 10 },
    });
  });

  it('settings set what they control, the constants the rest', () => {
    const r = rankingOptions({
      ...DEFAULT_SEARCH,
      bm25K1: 1.2,
      bm25B: 0.75,
      bm25Delta: 1,
      queryExpansion: false,
      expansionDocs: 5,
      expansionTerms: 7,
      proximityWeight: 0,
      proximityWindow: 8,
    });
    expect(r.proximity).toEqual({ weight: 0, window: 8, ...RANKING_CONSTANTS.proximity });
    expect(r.bm25).toEqual({ k1: 1.2, b: 0.75, delta: 1 });
    expect(r.expansion).toEqual({ enabled: false, fbDocs: 5, fbTerms: 7, ...RANKING_CONSTANTS.expansion });
    expect(r.boost).toEqual(RANKING_CONSTANTS.boost);
  });
});
