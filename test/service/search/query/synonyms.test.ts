import { parseSynonyms, SettingsError, type SynonymsFile } from '../../../../configs';
import type { Item } from '../../../../service/content/item';
import { Analyzer } from '../../../../service/search/analysis/analyzer';
import { EmbeddedIndex } from '../../../../service/search/embedded-index';
import { planQuery } from '../../../../service/search/query/query-plan';
import { SYNONYM_WEIGHT, SynonymTable } from '../../../../service/search/query/synonyms';
import { DEFAULT_RANKING } from '../../../../service/search/ranking';

const analyzer = new Analyzer();
const analyze = (t: string) => analyzer.analyze(t);
const file = (text: string): SynonymsFile => ({ path: '/syn.txt', text, rules: parseSynonyms(text, '/syn.txt') });
const table = (text: string) => SynonymTable.build(file(text), analyze);
const at = '2026-01-01T00:00:00.000Z';
const doc = (id: string, body: string): Item => ({
  id,
  type: 'article',
  title: id,
  body,
  tags: [],
  created_at: at,
  updated_at: at,
});

describe('SynonymTable', () => {
  it('analyses every phrase with the index analyzer (stemming, stopwords)', () => {
    const t = table('Cars, the Automobiles');
    expect(t.match(analyze('car'))).toEqual([{ start: 0, length: 1, terms: [['automobil', SYNONYM_WEIGHT]] }]);
    expect(t.match(analyze('automobiles'))).toEqual([{ start: 0, length: 1, terms: [['car', SYNONYM_WEIGHT]] }]);
  });

  it('goes one way for =>', () => {
    const t = table('phone => telephone');
    expect(t.match(['phone'])).toEqual([{ start: 0, length: 1, terms: [['telephon', SYNONYM_WEIGHT]] }]);
    expect(t.match(['telephon'])).toEqual([]);
  });

  it('adds up the rules of one phrase and drops repeats', () => {
    const t = table('foo => foo bar\nfoo => baz\nfoo, baz');
    expect(t.match(['foo'])[0].terms).toEqual([
      ['foo', SYNONYM_WEIGHT / 2],
      ['bar', SYNONYM_WEIGHT / 2],
      ['baz', SYNONYM_WEIGHT],
    ]);
  });

  it('matches multi-word phrases, the longest from the leftmost position first', () => {
    const t = table('usa, united states of america\nunited, joined');
    // "of" is a stopword: the phrase is [unit, state, america]; each term of an alternative of m
    // terms for a phrase of n carries SYNONYM_WEIGHT × n ÷ m.
    expect(t.match(analyze('usa'))[0].terms).toEqual([
      ['unit', SYNONYM_WEIGHT / 3],
      ['state', SYNONYM_WEIGHT / 3],
      ['america', SYNONYM_WEIGHT / 3],
    ]);
    expect(t.match(analyze('the united states of america today'))).toEqual([
      { start: 0, length: 3, terms: [['usa', SYNONYM_WEIGHT * 3]] },
    ]);
    expect(t.match(analyze('united kingdom'))).toEqual([{ start: 0, length: 1, terms: [['join', SYNONYM_WEIGHT]] }]);
  });

  it('refuses a phrase that analyses to nothing, naming the file and line', () => {
    expect(() => table('car, automobile\nthe, a')).toThrow(SettingsError);
    expect(() => table('car, automobile\nthe, a')).toThrow(
      'SEARCH_SYNONYMS_FILE="/syn.txt" line 2: "the" has no searchable word',
    );
  });
});

describe('planQuery with synonyms', () => {
  const noExpansions = () => [];

  it('scores synonyms beside the query terms, in their groups, and leaves the terms alone', () => {
    const plan = planQuery(analyze('car'), DEFAULT_RANKING, noExpansions, table('car, automobile'));
    expect(plan.terms).toEqual(['car']);
    expect(plan.short).toBe(true);
    expect(plan.scored).toEqual([
      ['car', 1],
      ['automobil', SYNONYM_WEIGHT],
    ]);
    expect(plan.groups).toEqual([['car', 'automobil']]);
    expect(plan.synonyms).toEqual([['automobil', SYNONYM_WEIGHT]]);
  });

  it('sums a synonym over its places and skips one the query holds itself', () => {
    const plan = planQuery(
      analyze('car engine car automobile vehicle'),
      DEFAULT_RANKING,
      noExpansions,
      table('car, automobile\nengine, motor\nvehicle, motor'),
    );
    expect(plan.short).toBe(false);
    expect(plan.synonyms).toEqual([['motor', 2 * SYNONYM_WEIGHT]]);
    expect(plan.groups).toEqual([['car'], ['engin', 'motor'], ['automobil'], ['vehicl', 'motor']]);
  });

  it('is the plan of before without synonyms', () => {
    const q = analyze('laser beam optics laser');
    const before = planQuery(q, DEFAULT_RANKING, noExpansions);
    expect(planQuery(q, DEFAULT_RANKING, noExpansions, table('car, automobile'))).toEqual(before);
    expect(before.synonyms).toEqual([]);
  });
});

describe('EmbeddedIndex with synonyms', () => {
  const items = [
    doc('auto', 'The automobile was parked outside.'),
    doc('car', 'A car was parked outside.'),
    doc('tele', 'The telephone rang twice.'),
    doc('other', 'Bread and flour.'),
  ];
  const ids = async (index: EmbeddedIndex, text: string) =>
    (await index.search({ text, limit: 10, offset: 0, snippets: false })).hits.map((h) => h.id);

  it('finds a document saying automobile for car, and the word itself first', async () => {
    const index = new EmbeddedIndex({ synonyms: file('car, automobile') });
    await index.replaceAll(items);
    expect(await ids(index, 'car')).toEqual(['car', 'auto']);
    expect(await ids(index, 'automobiles')).toEqual(['auto', 'car']);
    const plain = new EmbeddedIndex();
    await plain.replaceAll(items);
    expect(await ids(plain, 'car')).toEqual(['car']);
  });

  it('highlights the synonym in snippets', async () => {
    const index = new EmbeddedIndex({ synonyms: file('car, automobile') });
    await index.replaceAll(items);
    const page = await index.search({ text: 'car', limit: 10, offset: 0 });
    expect(page.hits.find((h) => h.id === 'auto')?.snippet).toContain('<mark>automobile</mark>');
  });

  it('does not go backwards for a one-way rule', async () => {
    const index = new EmbeddedIndex({ synonyms: file('phone => telephone') });
    await index.replaceAll([...items, doc('phone', 'My phone is old.')]);
    expect(await ids(index, 'phone')).toEqual(['phone', 'tele']);
    expect(await ids(index, 'telephone')).toEqual(['tele']);
  });
});
