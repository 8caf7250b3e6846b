import fc from 'fast-check';
import { Analyzer } from '../../../../service/search/analysis/analyzer';
import { SNIPPET_SCAN, buildSnippet, leadSnippet } from '../../../../service/search/analysis/snippet';
import { buildSnippetBefore, leadSnippetBefore } from '../../../../tools/oracles/regex-text-passes';
import { repeatTo } from '../../../helpers/hostile-text';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

const WORDS = ['laser', 'beam', 'mirror', 'the', 'a', 'optics', "don't", 'café', 'Ünïcode', '𝐀𝐁𝐂', '42', 'x'];
const GLUE = [' ', '. ', ', ', '\n', '  ', "'", '’', '-', '😀', '\u00a0', '<b>', '&'];
const textArb = (maxLength: number) =>
  fc
    .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...GLUE)), { maxLength })
    .map((parts) => parts.map(([w, g]) => w + g).join(''));

/** An analyzer that counts the characters it tokenises. */
class CountingAnalyzer extends Analyzer {
  read = 0;
  override spans(text: string) {
    this.read += text.length;
    return super.spans(text);
  }
}

describe('Analyzer.spansLazily', () => {
  const a = new Analyzer();
  it(
    'gives the words spans gives, chunk boundaries and long runs of word characters included',
    () => {
      const longRun = fc
        .tuple(fc.constantFrom('a', "'", '1', '😀', 'é'), fc.integer({ min: 200, max: 5000 }))
        .map(([u, k]) => u.repeat(k));
      fc.assert(
        fc.property(fc.array(fc.oneof(textArb(400), longRun), { maxLength: 8 }), (parts) => {
          const text = parts.join(' x ');
          const lazily = [...a.spansLazily(text)];
          // Words longer than a chunk (1 KB) may be dropped: no index term is longer than 64 characters.
          const expected = a
            .spans(text)
            .filter((s) => s.end - s.start <= 1024 || lazily.some((l) => l.start === s.start));
          expect(lazily).toEqual(expected);
        }),
        { numRuns: 300, seed: 29 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

describe('buildSnippet', () => {
  const a = new Analyzer();
  it(
    'gives the snippets it gave before bounding its reading, for texts of a few KB',
    () => {
      fc.assert(
        fc.property(
          textArb(300),
          fc.subarray(['laser', 'beam', 'mirror', 'optic', 'café', '42']),
          fc.integer({ min: 40, max: 300 }),
          (text, terms, maxChars) => {
            const wanted = new Set(terms);
            const isMatch = (t: string) => wanted.has(t);
            expect(buildSnippet(text, a, isMatch, { maxChars })).toBe(
              buildSnippetBefore(text, a, isMatch, { maxChars }),
            );
          },
        ),
        { numRuns: 2000, seed: 29 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('reads a bounded stretch of a 1 MB text: its start, or up to the first match and a few KB more', () => {
    const bound = SNIPPET_SCAN.firstMatchWithin + SNIPPET_SCAN.afterFirstMatch + 200 + 2 * (1024 + 256);
    const common = repeatTo('the laser beam is bright and the mirror is clean. ', 1_000_000);
    const late = `${repeatTo('filler words only. ', 1_000_000)} laser`;
    for (const text of [common, late]) {
      const counting = new CountingAnalyzer();
      buildSnippet(text, counting, (t) => t === 'laser');
      expect(counting.read).toBeLessThan(bound);
    }
    const counting = new CountingAnalyzer();
    expect(buildSnippet(common, counting, (t) => t === 'laser')).toBe(
      buildSnippetBefore(common.slice(0, 10_000), a, (t) => t === 'laser'),
    );
  });
});

describe('leadSnippet', () => {
  it(
    'gives the lead it gave before, reading only what it shows',
    () => {
      fc.assert(
        fc.property(textArb(100), fc.integer({ min: 10, max: 300 }), (text, max) => {
          expect(leadSnippet(text, max)).toBe(leadSnippetBefore(text, max));
        }),
        { numRuns: 2000, seed: 29 },
      );
      const huge = repeatTo('word \u00a0 ', 1_000_000);
      expect(leadSnippet(huge, 200)).toBe(leadSnippetBefore(huge, 200));
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
