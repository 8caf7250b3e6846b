import {
  BATCH_LIMITS,
  ITEM_LIMITS,
  batchVocabularyProblem,
  countDistinctWords,
  slugify,
  stamp,
  validateItem,
  compareNewestFirst,
} from '../../../service/content/item';
import { formatOf, parseFile } from '../../../service/content/parse/parse-files';
import { EXPORTS, renderExport } from '../../../service/content/export';
import { plainText } from '../../../service/content/plain-text';

describe('items', () => {
  it('slugifies titles, folding accents, and hashes titles without Latin letters', () => {
    expect(slugify('  Héllo, Wörld & Friends! ')).toBe('hello-world-and-friends');
    expect(slugify('日本語')).toMatch(/^item-[0-9a-f]{8}$/);
    expect(slugify('日本語')).toBe(slugify('日本語'));
    expect(slugify('x'.repeat(100)).length).toBeLessThanOrEqual(80);
  });

  it('validates, trims and fills the id; drops unknown keys and duplicate tags', () => {
    const v = validateItem({
      type: 'project',
      title: '  My Tool ',
      body: 'b',
      tags: ['A', 'a', 'b'],
      summary: '',
      extra: 1,
    });
    expect(v).toEqual({
      ok: true,
      item: { id: 'my-tool', type: 'project', title: 'My Tool', body: 'b', tags: ['A', 'b'] },
    });
  });

  it('names every bad field', () => {
    const v = validateItem({ type: 'x', title: 1, body: null, date: 'yesterday' });
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.issues.map((i) => i.field).sort()).toEqual(['body', 'date', 'title', 'type']);
    expect(validateItem('str')).toEqual({
      ok: false,
      issues: [{ field: '', message: 'an item must be a JSON object' }],
    });
  });

  it('stamps created_at once and updated_at every time', () => {
    const first = stamp({ id: 'a', type: 'article', title: 't', body: '' }, 1000);
    const second = stamp({ id: 'a', type: 'article', title: 't2', body: '' }, 5000, first);
    expect(second.created_at).toBe(first.created_at);
    expect(second.updated_at).toBe(new Date(5000).toISOString());
  });

  it('orders newest first by date, then updated_at, then id', () => {
    const mk = (id: string, date?: string) => ({
      ...stamp({ id, type: 'article' as const, title: id, body: '', ...(date ? { date } : {}) }, 0),
    });
    expect(
      [mk('a', '2020-01-01'), mk('b', '2024-01-01'), mk('c', '2024-01-01')].sort(compareNewestFirst).map((i) => i.id),
    ).toEqual(['b', 'c', 'a']);
  });
});

describe('upload parsing', () => {
  it('maps extensions to formats', () => {
    expect(['a.md', 'b.MARKDOWN', 'c.txt', 'd.json', 'e.ndjson', 'f.jsonl', 'g.pdf', 'noext'].map(formatOf)).toEqual([
      'md',
      'md',
      'txt',
      'json',
      'ndjson',
      'ndjson',
      undefined,
      undefined,
    ]);
  });

  it('reads markdown front matter, dates and comma tags; the title falls back to the H1 or the file name', () => {
    expect(parseFile('x.md', 'md', '---\ntitle: T\ndate: 2024-01-05\ntags: a, b\n---\nBody')).toEqual([
      { type: 'article', title: 'T', date: '2024-01-05', tags: ['a', 'b'], body: 'Body' },
    ]);
    expect(parseFile('x.md', 'md', '# Heading\n\ntext', { type: 'project' })).toEqual([
      { type: 'project', title: 'Heading', body: 'text' },
    ]);
    expect(parseFile('my-notes.md', 'md', 'just text')).toEqual([
      { type: 'article', title: 'my notes', body: 'just text' },
    ]);
  });

  it('reads JSON items, arrays and {items}', () => {
    expect(parseFile('a.json', 'json', '{"title":"x"}')).toEqual([{ title: 'x' }]);
    expect(parseFile('a.json', 'json', '{"items":[{"title":"x"},{"title":"y"}]}')).toHaveLength(2);
  });
});

describe('exports and plain text', () => {
  it('lists exactly the documented names', () => {
    expect([...EXPORTS.keys()].sort()).toEqual(
      [
        'all.json',
        'all.md',
        'all.ndjson',
        'articles.json',
        'articles.ndjson',
        'experiences.json',
        'experiences.ndjson',
        'projects.json',
        'projects.ndjson',
      ].sort(),
    );
    expect(renderExport(EXPORTS.get('all.ndjson')!, [])).toBe('');
  });

  it('strips markdown to the words', () => {
    expect(
      plainText(
        '# Title\n\nSome **bold** and [a link](http://x.y) and `code`.\n\n```js\nconst a = 1;\n```\n- item <b>x</b>',
      ),
    ).toBe('Title\nSome bold and a link and code.\nconst a = 1;\nitem x');
  });
});

describe('the vocabulary limit of an item', () => {
  const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${(from + i).toString(36)}`).join(' ');

  it('counts distinct case-folded words and stops once past the limit', () => {
    expect(countDistinctWords(['Laser laser LASER beam', 'beam optics'], 100)).toBe(3);
    expect(countDistinctWords([words(10_000)], 50)).toBe(51);
  });

  it("counts a batch's words an item at a time, awaiting a step between items, and stops once past the batch limit", async () => {
    const per = BATCH_LIMITS.distinctWords / 4;
    const batch = Array.from({ length: 10 }, (_, k) => ({
      type: 'article' as const,
      title: 't',
      body: words(per, k * per),
    }));
    let steps = 0;
    const step = () => {
      steps++;
      return undefined;
    };
    expect(await batchVocabularyProblem(batch.slice(0, 3), step)).toBeUndefined();
    expect(steps).toBe(3);
    steps = 0;
    expect(await batchVocabularyProblem(batch, step)).toMatch(/more than 200000 distinct words together/);
    // The fourth item passes the limit (four quarters and the title's word): the rest are not read.
    expect(steps).toBe(3);
  });

  it('refuses an item with more distinct words than ITEM_LIMITS.distinctWords, over all its text fields', () => {
    const max = ITEM_LIMITS.distinctWords;
    expect(validateItem({ type: 'article', title: 'w0', body: words(max - 1) }).ok).toBe(true);
    expect(validateItem({ type: 'article', title: 'W0', body: `${words(max)} ${words(max)}` }).ok).toBe(true);
    const v = validateItem({ type: 'article', title: 'ok', summary: 'extra words', body: words(max) });
    expect(v).toEqual({
      ok: false,
      issues: [{ field: 'body', message: expect.stringContaining(`more than ${max} distinct words`) }],
    });
  });
});
