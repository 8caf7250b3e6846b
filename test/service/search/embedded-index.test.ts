import type { Item } from '../../../service/content/item';
import type { ItemFilter } from '../../../service/content/item-filter';
import { Analyzer } from '../../../service/search/analysis/analyzer';
import { rm3Weights } from '../../../service/search/query/expansion';
import { EmbeddedIndex } from '../../../service/search/embedded-index';
import { DEFAULT_RANKING } from '../../../service/search/ranking';
import { ExhaustiveIndex } from '../../../tools/oracles/exhaustive-index';
import { QUERY_LIMITS, bestExpansions, distinctTerms } from '../../../service/search/query/query-plan';
import { ResultCache } from '../../../service/search/result-cache';
import { buildSnippet } from '../../../service/search/analysis/snippet';
import { keepPlainText } from '../../../service/content/plain-text';

const at = '2026-01-01T00:00:00.000Z';
const doc = (id: string, title: string, body: string, extra: Partial<Item> = {}): Item => ({
  id,
  type: 'article',
  title,
  body,
  tags: [],
  created_at: at,
  updated_at: at,
  ...extra,
});

describe('Analyzer', () => {
  const a = new Analyzer();
  it('lower-cases, folds accents, drops stopwords and one-letter words, stems with Porter2', () => {
    expect(a.analyze("The Café's measurements of running dogs, a B-tree")).toEqual([
      'cafe',
      'measur',
      'run',
      'dog',
      'tree',
    ]);
    expect(a.analyze('measuring measured measure')).toEqual(['measur', 'measur', 'measur']);
    expect(a.analyze("don't won't")).toEqual([]);
    expect(a.analyze('http2 2024 x 9')).toEqual(['http2', '2024', '9']);
  });
});

describe('EmbeddedIndex', () => {
  const items = [
    doc('k8s', 'Kubernetes at home', 'Storage is where clusters hurt. Longhorn replicates volumes.', {
      tags: ['kubernetes'],
    }),
    doc('bm25', 'BM25 explained', 'Ranking by term frequency and inverse document frequency.', { tags: ['search'] }),
    doc('pi', 'Weather station', 'A Raspberry Pi measures temperature.', { type: 'project', tags: ['hardware'] }),
    doc('cook', 'Cooking pasta', 'Boil water, add salt, cook the pasta for nine minutes.'),
  ];
  let index: ExhaustiveIndex;
  beforeEach(async () => {
    index = new ExhaustiveIndex();
    await index.replaceAll(items);
  });

  it('ranks by BM25 over title and text, best first, with total', async () => {
    const page = await index.search({ text: 'storage clusters', limit: 10, offset: 0 });
    expect(page.total).toBe(1);
    expect(page.hits[0].id).toBe('k8s');
    expect(page.hits[0].score).toBeGreaterThan(0);
  });

  it('stems queries like documents', async () => {
    expect((await index.search({ text: 'measuring temperatures', limit: 10, offset: 0 })).hits[0].id).toBe('pi');
  });

  it('matches prefixes and typos in short queries only', async () => {
    expect((await index.search({ text: 'kuber', limit: 10, offset: 0 })).hits[0]?.id).toBe('k8s');
    expect((await index.search({ text: 'raspbery', limit: 10, offset: 0 })).hits[0]?.id).toBe('pi');
    expect(
      (await index.search({ text: 'kuber raspbery clustr ranking', limit: 10, offset: 0 })).hits.map((h) => h.id),
    ).toEqual(['bm25']);
  });

  it('filters by type and tag (case-insensitive)', async () => {
    expect(
      (await index.search({ text: 'temperature', filter: { type: ['article'] }, limit: 10, offset: 0 })).total,
    ).toBe(0);
    expect(
      (await index.search({ text: 'temperature', filter: { type: ['project'] }, limit: 10, offset: 0 })).total,
    ).toBe(1);
    expect((await index.search({ text: 'storage', filter: { tag: ['KUBERNETES'] }, limit: 10, offset: 0 })).total).toBe(
      1,
    );
    expect((await index.search({ text: 'storage', filter: { tag: ['search'] }, limit: 10, offset: 0 })).total).toBe(0);
  });

  it('replaces an upserted id instead of duplicating it', async () => {
    await index.upsert([doc('cook', 'Cooking rice', 'Rice needs less water than pasta.')]);
    expect(index.size()).toBe(4);
    expect((await index.search({ text: 'rice', limit: 10, offset: 0 })).hits.map((h) => h.id)).toEqual(['cook']);
    expect((await index.search({ text: 'salt', limit: 10, offset: 0 })).total).toBe(0);
  });

  it('breaks score ties by id so pages are stable', async () => {
    const twins = new EmbeddedIndex();
    await twins.replaceAll([
      doc('b', 'same', 'identical words'),
      doc('a', 'same', 'identical words'),
      doc('c', 'same', 'identical words'),
    ]);
    const page = await twins.search({ text: 'identical', limit: 10, offset: 0 });
    expect(page.hits.map((h) => h.id)).toEqual(['a', 'b', 'c']);
    expect((await twins.search({ text: 'identical', limit: 1, offset: 1 })).hits.map((h) => h.id)).toEqual(['b']);
  });

  it('highlights the matched words in an HTML-safe snippet', async () => {
    await index.upsert([
      doc('xss', 'Escaping', 'Markdown drops <script>tags</script>, but a < b & "c" stay text in snippets.'),
    ]);
    const [hit] = (await index.search({ text: 'snippets', limit: 1, offset: 0 })).hits;
    expect(hit.snippet).toBe(
      'Markdown drops tags , but a &lt; b &amp; &quot;c&quot; stay text in <mark>snippets</mark>.',
    );
  });

  it('indexes and cuts snippets from the items without adding to them, from the version indexed', async () => {
    const first = doc('md', 'Markdown', 'Some **bold** [linked](http://x.y) words about gardens.', {
      tags: ['Garden'],
    });
    const twin = new EmbeddedIndex();
    await twin.replaceAll([first]);
    const snippet = async () => (await twin.search({ text: 'gardens', limit: 1, offset: 0 })).hits[0]?.snippet;
    expect(await snippet()).toBe('Some bold linked words about <mark>gardens</mark>.');
    expect((await twin.search({ text: '', limit: 1, offset: 0, filter: { tag: ['garden'] } })).total).toBe(1);
    // The index keeps no plain text on the item (one property more per item at 1M: issue 40).
    expect(Object.getOwnPropertySymbols(first)).toEqual([]);
    // A plain text the store kept with the item is the one quoted.
    const second = doc('md', 'Markdown', '*Other* words about gardens.');
    keepPlainText(second, 'Kept words about gardens.');
    await twin.upsert([second]);
    expect(await snippet()).toBe('Kept words about <mark>gardens</mark>.');
    expect((await twin.search({ text: '', limit: 1, offset: 0, filter: { tag: ['garden'] } })).total).toBe(0);
  });

  it('filters, replaces and breaks ties on long queries too (exact scoring path)', async () => {
    const q = (text: string, filter: ItemFilter = {}) => index.search({ text, limit: 10, offset: 0, filter });
    expect((await q('raspberry measures temperature')).hits.map((h) => h.id)).toEqual(['pi']);
    expect((await q('raspberry measures temperature', { type: ['article'] })).total).toBe(0);
    expect((await q('storage clusters volumes', { tag: ['KUBERNETES'] })).total).toBe(1);
    expect((await q('storage clusters volumes', { tag: ['search'] })).total).toBe(0);
    await index.upsert([doc('k8s', 'Kubernetes at home', 'Nothing about disks any more.', { tags: ['kubernetes'] })]);
    expect((await q('storage clusters volumes')).total).toBe(0);
    const twins = new EmbeddedIndex();
    await twins.replaceAll([
      doc('b', 'same', 'identical words here'),
      doc('a', 'same', 'identical words here'),
      doc('c', 'same', 'identical words here'),
    ]);
    expect((await twins.search({ text: 'identical words here', limit: 10, offset: 0 })).hits.map((h) => h.id)).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect((await twins.search({ text: 'identical words here', limit: 1, offset: 1 })).hits.map((h) => h.id)).toEqual([
      'b',
    ]);
  });

  it('multiplies by the matched query terms with coordination on', async () => {
    // Proximity adds after the product: off on both sides, so only coordination differs.
    const off = { proximity: { ...DEFAULT_RANKING.proximity, weight: 0 } };
    const coord = new EmbeddedIndex({ coordination: true, ...off });
    await coord.replaceAll(items);
    const plainIndex = new EmbeddedIndex(off);
    await plainIndex.replaceAll(items);
    const text = 'raspberry measures temperature';
    const [plain] = (await plainIndex.search({ text, limit: 1, offset: 0 })).hits;
    const [hit] = (await coord.search({ text, limit: 1, offset: 0 })).hits;
    expect(hit.score).toBeCloseTo(plain.score * 3, 12);
  });

  it("pages search() through the exhaustive oracle's full ranking (rank()), in its order", async () => {
    const all = index.rank({ text: 'water pasta storage ranking' }).ranked.map((h) => h.id);
    const paged: string[] = [];
    for (let offset = 0; offset < all.length; offset += 1) {
      paged.push(
        ...(await index.search({ text: 'water pasta storage ranking', limit: 1, offset, snippets: false })).hits.map(
          (h) => h.id,
        ),
      );
    }
    expect(paged).toEqual(all);
    expect(all.length).toBe(3);
  });

  it('expands long queries with RM3 once the index is large enough', async () => {
    const big = new EmbeddedIndex({
      expansion: { enabled: true, fbDocs: 3, fbTerms: 20, originalWeight: 0.5, minDocs: 5 },
    });
    const corpus = [
      doc('a1', 'x', 'laser optics beam coherent light'),
      doc('a2', 'x', 'laser beam optics mirror'),
      doc('a3', 'x', 'coherent light source laser'),
      doc('b1', 'x', 'mirror polishing technique for telescopes'),
      doc('c1', 'x', 'bread baking flour water'),
      doc('c2', 'x', 'water boiling point'),
    ];
    await big.replaceAll(corpus);
    const plain = new EmbeddedIndex({
      expansion: { enabled: false, fbDocs: 3, fbTerms: 5, originalWeight: 0.5, minDocs: 5 },
    });
    await plain.replaceAll(corpus);
    const q = { text: 'laser beam optics', limit: 10, offset: 0 };
    expect((await plain.search(q)).hits.map((h) => h.id)).not.toContain('b1');
    // b1 shares only "mirror" with the feedback documents: expansion brings it in.
    expect((await big.search(q)).hits.map((h) => h.id)).toContain('b1');
  });
});

describe('query work bounds', () => {
  const L = QUERY_LIMITS;
  // 600 index terms under one prefix, and near spellings of a long word.
  const vocab = Array.from({ length: 600 }, (_, i) => `zeta${i.toString(36)}x`).join(' ');
  let index: EmbeddedIndex;
  beforeAll(async () => {
    index = new EmbeddedIndex();
    await index.replaceAll([
      doc('v', 'vocabulary', vocab),
      doc('w', 'words', 'electroencephalographically electroencephalographicalli measurement'),
    ]);
  });

  it('scores a repeated word once, weighted by its count', async () => {
    const word = 'electroencephalographically';
    const plan = index.plan(Array(16).fill(word).join(' '));
    expect(plan.terms).toHaveLength(16);
    expect(plan.short).toBe(true);
    expect(plan.scored.filter(([, w]) => w === 16)).toHaveLength(1);
    expect(plan.scored.length).toBeLessThanOrEqual(1 + L.maxExpansionsPerTerm);
    const once = (await index.search({ text: word, limit: 10, offset: 0 })).hits;
    const many = (await index.search({ text: Array(16).fill(word).join(' '), limit: 10, offset: 0 })).hits;
    expect(many.map((h) => h.id)).toEqual(once.map((h) => h.id));
    expect(many[0].score).toBeCloseTo(16 * once[0].score, 9);
  });

  it('does not match terms longer than maxFuzzyLength fuzzily', () => {
    // "electroencephalographically" stems to a term far past 20 letters: no near spellings.
    const [term] = index.plan('electroencephalographically').terms;
    expect(term.length).toBeGreaterThan(L.maxFuzzyLength);
    expect(index.plan('electroencephalographically').scored.map(([t]) => t)).toEqual([term]);
  });

  it('caps prefix expansions per term and per query, closest first', async () => {
    const one = index.plan('zeta');
    expect(one.scored).toHaveLength(1 + L.maxExpansionsPerTerm);
    const wide = new EmbeddedIndex({ shortQueryTerms: 8 });
    await wide.upsert([doc('v', 'vocabulary', `${vocab} ${vocab.replace(/zeta/g, 'beta')}`)]);
    const plan = wide.plan('zeta beta zeta');
    expect(plan.scored.length).toBe(2 + L.maxExpansions);
    expect(plan.scored[0]).toEqual(['zeta', 2]);
    // Prefix weights fall with the distance: the shortest matches are kept.
    const lengths = one.scored.slice(1).map(([t]) => t.length);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(6);
  });

  it('searches only the first maxTerms distinct terms of a long query', async () => {
    const words = Array.from({ length: 100 }, (_, i) => `word${i}`);
    const plan = index.plan(words.join(' '));
    expect(plan.short).toBe(false);
    expect(plan.scored).toHaveLength(L.maxTerms);
    expect(plan.terms).toEqual(index.queryTerms(words.join(' ')).slice(0, L.maxTerms));
  });

  it('distinctTerms and bestExpansions are pure bounds', () => {
    expect(distinctTerms(['a', 'b', 'a', 'c', 'a'], 2)).toEqual({
      weighted: [
        ['a', 3],
        ['b', 1],
      ],
      kept: ['a', 'b', 'a', 'a'],
    });
    const cands = [
      { term: 'abd', weight: 0.3, distance: 1, df: 2 },
      { term: 'abc', weight: 0.3, distance: 1, df: 2 },
      { term: 'abx', weight: 0.3, distance: 1, df: 9 },
      { term: 'ab', weight: 0.2, distance: 2, df: 99 },
    ];
    // Closest first, then most frequent, then by term.
    expect(bestExpansions(cands, 3).map((e) => e.term)).toEqual(['abx', 'abc', 'abd']);
    expect(bestExpansions(cands, 0)).toEqual([]);
  });

  it('keeps, of expansions at the same distance, the ones in most documents', async () => {
    const rare = Array.from({ length: 40 }, (_, i) =>
      doc(`r${i}`, 'rare', `zonk${String.fromCharCode(97 + (i % 26))}${i}`),
    );
    const common = Array.from({ length: 40 }, (_, i) => doc(`c${i}`, 'common', 'zonkqq zonkrr'));
    const idx = new EmbeddedIndex();
    await idx.replaceAll([...rare, ...common]);
    const plan = idx.plan('zonk');
    // Two letters added: zonkqq and zonkrr (40 documents each) beat every one-document completion.
    expect(plan.scored.slice(1, 3).map(([t]) => t)).toEqual(['zonkqq', 'zonkrr']);
    expect(plan.scored).toHaveLength(1 + L.maxExpansionsPerTerm);
  });

  it('a 2-letter query scores its one term: too short for prefix (prefixMinLength) or fuzzy (fuzzyMinLength) matching', async () => {
    const idx = new EmbeddedIndex();
    await idx.replaceAll([doc('a', 'ze', `ze ${vocab} zf zq`)]);
    const plan = idx.plan('ze');
    expect(plan.scored).toEqual([['ze', 1]]);
    expect(plan.groups).toEqual([['ze']]);
  });

  it('a 30-letter query scores at most its term and maxExpansionsPerTerm prefix matches, no near spellings (maxFuzzyLength)', async () => {
    const long = 'abcdefghijklmnopqrstuvwxyzabcd';
    const idx = new EmbeddedIndex();
    const completions = Array.from({ length: 40 }, (_, i) => `${long}${i.toString(36)}`);
    // One edit away from the query: a near spelling that a shorter term would match.
    const typo = `x${long.slice(1)}`;
    await idx.replaceAll([doc('a', 'long', [long, typo, ...completions].join(' '))]);
    const [term] = idx.queryTerms(long);
    expect(term.length).toBeGreaterThan(L.maxFuzzyLength);
    const plan = idx.plan(long);
    expect(plan.scored).toHaveLength(1 + L.maxExpansionsPerTerm);
    expect(plan.scored.map(([t]) => t)).not.toContain(idx.queryTerms(typo)[0]);
    expect(plan.scored.slice(1).every(([t, w]) => t.startsWith(term) && w < 1)).toBe(true);
  });
});

describe('indexing in slices', () => {
  const many = Array.from({ length: 20 }, (_, i) => doc(`d${i}`, `doc ${i}`, `shared words number${i}`));

  it('yields to the event loop between items of a large upsert, and searches see whole items', async () => {
    const index = new EmbeddedIndex({ indexSliceMs: 0 });
    const seen: number[] = [];
    const probe = () => {
      seen.push(index.size());
      if (index.size() < many.length) setImmediate(probe);
    };
    setImmediate(probe);
    await index.upsert(many);
    expect(seen.some((n) => n > 0 && n < many.length)).toBe(true);
    expect(index.size()).toBe(many.length);
  });

  it('analyses a very large body in slices, serving the old version of the item until the new one is indexed whole', async () => {
    const index = new EmbeddedIndex({ indexSliceMs: 0 });
    await index.upsert([doc('big', 'big', 'original words')]);
    const words = Array.from({ length: 40_000 }, (_, i) => `word${i % 997} plasma`).join(' ');
    let probes = 0;
    let sawOld = false;
    const probe = async () => {
      probes += 1;
      const page = await index.search({ text: 'original', limit: 10, offset: 0, snippets: false });
      if (page.total === 1) sawOld = true;
    };
    const timer = setInterval(() => void probe(), 0);
    await index.upsert([doc('big', 'big', words)]);
    clearInterval(timer);
    expect(probes).toBeGreaterThan(0);
    expect(sawOld).toBe(true);
    expect((await index.search({ text: 'original', limit: 10, offset: 0 })).total).toBe(0);
    expect((await index.search({ text: 'plasma', limit: 10, offset: 0 })).hits.map((h) => h.id)).toEqual(['big']);
  });

  it('analyzeInSlices gives the terms of analyze', async () => {
    const a = new Analyzer();
    const text = "Measuring the lasers' beams: naïve café résumé, 42 and l'été — the end ".repeat(500);
    let pauses = 0;
    expect(await a.analyzeInSlices(text, async () => void (pauses += 1), 100)).toEqual(a.analyze(text));
    expect(pauses).toBeGreaterThan(10);
  });

  it('runs writes in order: an upsert made during a sliced replaceAll lands in the new index', async () => {
    const index = new EmbeddedIndex({ indexSliceMs: 0 });
    const replacing = index.replaceAll(many);
    const upserting = index.upsert([doc('late', 'late', 'arrived during the rebuild')]);
    // Until the rebuild swaps in, searches see the old (empty) index whole.
    expect(index.size()).toBe(0);
    await Promise.all([replacing, upserting]);
    expect(index.size()).toBe(many.length + 1);
    expect((await index.search({ text: 'rebuild', limit: 10, offset: 0 })).hits.map((h) => h.id)).toEqual(['late']);
  });
});

describe('rm3Weights', () => {
  it('mixes the query (λ) with the feedback model (1 − λ), both normalised', () => {
    const vector = (pairs: Record<string, number>) => ({
      tf: new Map(Object.entries(pairs)),
      length: Object.values(pairs).reduce((a, b) => a + b, 0),
    });
    const w = rm3Weights(['a'], [{ score: 1, vector: vector({ a: 2, b: 1, c: 1 }) }], {
      fbTerms: 2,
      originalWeight: 0.5,
    });
    // P(w|R) = a .5, b .25, c .25 → top 2: a, b (tie b/c broken by term) → renormalised a 2/3, b 1/3.
    expect([...w.keys()]).toEqual(['a', 'b']);
    expect(w.get('a')).toBeCloseTo(0.5 + 0.5 * (2 / 3), 12);
    expect(w.get('b')).toBeCloseTo(0.5 * (1 / 3), 12);
  });

  it('keeps the query alone without feedback', () => {
    expect([...rm3Weights(['a', 'a', 'b'], [], { fbTerms: 5, originalWeight: 0.5 })]).toEqual([
      ['a', 2 / 3],
      ['b', 1 / 3],
    ]);
  });
});

describe('buildSnippet', () => {
  const a = new Analyzer();
  it('picks the window with most distinct matches and marks them', () => {
    const text = `${'filler words here. '.repeat(20)}The laser beam hit the mirror. ${'more filler text. '.repeat(20)}`;
    const s = buildSnippet(text, a, (t) => t === 'laser' || t === 'mirror', { maxChars: 80 })!;
    expect(s).toContain('<mark>laser</mark>');
    expect(s).toContain('<mark>mirror</mark>');
    expect(s.startsWith('…')).toBe(true);
    expect(s.endsWith('…')).toBe(true);
  });
  it('returns undefined when nothing matches', () => {
    expect(buildSnippet('nothing here', a, () => false)).toBeUndefined();
  });
});

describe('ResultCache', () => {
  it('is an LRU bounded by maxSize, expires by TTL, and clears', () => {
    let now = 1_000;
    const c = new ResultCache<{ v: number }>({ maxSize: 2, ttlSeconds: 10, now: () => now });
    c.set('a', { v: 1 });
    c.set('b', { v: 2 });
    c.get('a');
    c.set('c', { v: 3 });
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toEqual({ v: 1 });
    expect(c.size()).toBe(2);
    expect(c.maxSize()).toBe(2);
    now = 12_000;
    expect(c.size()).toBe(0);
    c.set('d', { v: 4 });
    c.clear();
    expect(c.get('d')).toBeUndefined();
  });
});
