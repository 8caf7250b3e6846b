import type { Item } from '../../../service/content/item';
import { PASSAGE_SCAN, passageFor } from '../../../service/chat/passages';
import { PASSAGE_CHARS } from '../../../service/content/sentences';
import { keepPlainText, plainTextOf } from '../../../service/content/plain-text';
import { Analyzer } from '../../../service/search/analysis/analyzer';

const at = '2026-01-01T00:00:00.000Z';
const item = (body: string, summary?: string): Item => ({
  id: 'x',
  type: 'article',
  title: 'X',
  body,
  tags: [],
  created_at: at,
  updated_at: at,
  ...(summary ? { summary } : {}),
});

/** The obvious quadratic search the sliding window replaces. */
function reference(body: string, question: string, analyzer: Analyzer, budget: number): string {
  const wanted = new Set(analyzer.analyze(question));
  const sents = body
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
  let best = { start: 0, end: 0, score: -1 };
  for (let i = 0; i < sents.length; i++) {
    const seen = new Set<string>();
    let len = 0;
    let j = i;
    for (; j < sents.length && (j === i || len + sents[j].length + 1 <= budget); j++) {
      len += sents[j].length + 1;
      for (const t of analyzer.analyze(sents[j])) if (wanted.has(t)) seen.add(t);
    }
    if (seen.size > best.score) best = { start: i, end: j, score: seen.size };
  }
  return sents.slice(best.start, best.end).join(' ');
}

describe('passageFor', () => {
  const analyzer = new Analyzer();

  it('picks the run of sentences with the most distinct question terms, like the quadratic search', () => {
    const words = ['laser', 'beam', 'water', 'bread', 'mirror', 'light', 'flour'];
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let round = 0; round < 30; round++) {
      const sents = Array.from(
        { length: 5 + rnd(40) },
        () => `${Array.from({ length: 1 + rnd(30) }, () => words[rnd(words.length)]).join(' ')}.`,
      );
      const body = sents.join(' ');
      const question = 'laser mirror flour light';
      const got = passageFor(item(body), question, analyzer, 150).text;
      const want = reference(body, question, analyzer, 150);
      // An oversized single sentence is cut with an ellipsis; otherwise the run is given whole.
      if (want.length <= 150) expect(got).toBe(want);
      else expect(got.endsWith('…') && want.startsWith(got.slice(0, -1))).toBe(true);
    }
  });

  it('handles a body of many tiny sentences and a question of one repeated word', () => {
    // The match lies within the stretch a passage reads (PASSAGE_SCAN.firstMatchWithin).
    const body = `${'a. '.repeat(5_000)}The laser is here. ${'b. '.repeat(200_000)}`;
    const p = passageFor(item(body), 'laser '.repeat(500), analyzer);
    expect(p.text).toContain('The laser is here.');
  });

  it('reads a bounded stretch of a 1 MB item, and its plain text is not computed again', () => {
    class CountingAnalyzer extends Analyzer {
      read = 0;
      override spans(text: string) {
        this.read += text.length;
        return super.spans(text);
      }
      override analyze(text: string) {
        this.read += text.length;
        return super.analyze(text);
      }
    }
    const long = item(`${'Filler words in a sentence. '.repeat(40_000)}The laser is here.`);
    plainTextOf(long);
    const bound = PASSAGE_SCAN.firstMatchWithin + PASSAGE_SCAN.afterFirstMatch + 2 * 2_304 + 1_000;
    for (const question of ['laser', 'filler sentence', 'nothing matches']) {
      const counting = new CountingAnalyzer();
      const p = passageFor(long, question, counting);
      expect(p.text.length).toBeLessThanOrEqual(PASSAGE_CHARS);
      expect(counting.read).toBeLessThan(2 * bound);
    }
  });

  it('reads the plain text kept on the item (computed at write time), not the body again', () => {
    const it1 = item('# Heading\n\nSome **laser** text.');
    keepPlainText(it1, 'Kept plain text about the laser.');
    expect(passageFor(it1, 'laser', analyzer).text).toBe('Kept plain text about the laser.');
  });
});
