import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { keepPlainText, plainText, plainTextOf, plainTextOfInSteps } from '../../../service/content/plain-text';
import type { Item } from '../../../service/content/item';
import { plainTextBefore } from '../../../tools/oracles/regex-text-passes';
import { hostileTexts } from '../../helpers/hostile-text';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';
import { cpuMs } from '../../helpers/cpu-time';

const ROOT = join(__dirname, '..', '..', '..');

/** Pieces Markdown is made of, and those the old patterns stumbled on. */
const PIECES = [
  '[',
  ']',
  '(',
  ')',
  '!',
  '<',
  '>',
  '-',
  '*',
  '_',
  '#',
  '\n',
  ' ',
  '`',
  '~',
  '|',
  '&',
  ';',
  ':',
  '.',
  '/',
  '1',
  'a',
  'b',
  'word',
  '\t',
  '\u00a0',
  '\u2028',
  '\r',
  '\n\n',
  '   ',
  '<!--',
  '-->',
  '```',
  '~~~',
  '<http://',
  '<https://',
  '&amp;',
  '&nbsp;',
  '![',
  '](',
  ']:',
  '<a href="x">',
  '</a>',
  '**',
  '__',
  '> ',
  '- ',
  '1. ',
  '## ',
];

describe('plainText', () => {
  it('strips markdown to the words', () => {
    const md = [
      '---',
      '# Title #',
      '',
      'Some **bold**, _emphasis_ and [a link](http://x.y "t") and ![an image](i.png) and [a ref][r] and <b>x</b> <!-- hidden -->.',
      '',
      '```js',
      'const a = 1;',
      '```',
      '> quoted',
      '1. first',
      '- item &amp; more',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
      '',
      '***',
      '[r]: https://example.org/ref',
      'See <https://example.org>.',
    ].join('\r\n');
    expect(plainText(md)).toBe(
      'Title #\nSome bold, emphasis and a link and an image and a ref and x .\nconst a = 1;\nquoted\nfirst\nitem & more\na b\n--- ---\n1 2\nSee .',
    );
  });

  it('gives the same text as the regular expressions it replaced, on the repository’s own documents', () => {
    const files = [
      'README.md',
      'BENCHMARKS.md',
      ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`),
      'test/fixtures/content/kubernetes-notes.md',
    ];
    for (const f of files.filter((name) => name.endsWith('.md'))) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      expect({ f, same: plainText(text) === plainTextBefore(text) }).toEqual({ f, same: true });
    }
  });

  it(
    'gives the same text as the regular expressions it replaced, on generated Markdown-like text',
    () => {
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }), (pieces) => {
          const text = pieces.join('');
          expect(plainText(text)).toBe(plainTextBefore(text));
        }),
        { numRuns: 5000, seed: 29 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  // The bound: "finishes in well under a second". Each shape takes some tens of ms here;
  // the quadratic chain took seconds to hours on them.
  it.each(Object.entries(hostileTexts(1_000_000)))('cleans 1 MB of %s in well under a second', (_name, text) => {
    const spent = cpuMs(() => {
      plainText(text);
    });
    expect(spent).toBeLessThan(1000);
  });
});

describe('plainTextOfInSteps', () => {
  const item = (body: string): Item => ({
    id: 'a',
    type: 'article',
    title: 't',
    body,
    tags: [],
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });

  it("gives plainText's text, a pause after each pass, and keeps it on the item", async () => {
    const md = '# Title\r\n\nSome **bold** [a link](http://x.y) <b>x</b> <!-- c --> &amp; `code`\n- item\n\n***\n';
    for (const body of [md.repeat(2_000), ...Object.values(hostileTexts(5_000))]) {
      let pauses = 0;
      const one = item(body);
      expect(await plainTextOfInSteps(one, async () => void (pauses += 1))).toBe(plainText(body));
      expect(pauses).toBe(15);
      // Kept: the next call neither converts nor pauses.
      expect(await plainTextOfInSteps(one, async () => void (pauses += 1))).toBe(plainText(body));
      expect(pauses).toBe(15);
      expect(plainTextOf(one)).toBe(plainText(body));
    }
  });

  it('plainTextOf with keep: false gives the kept text, or makes one without keeping it', () => {
    const one = item('Some **bold** words');
    expect(plainTextOf(one, { keep: false })).toBe('Some bold words');
    expect(Object.getOwnPropertySymbols(one)).toEqual([]);
    keepPlainText(one, 'kept');
    expect(plainTextOf(one, { keep: false })).toBe('kept');
  });

  it('takes a kept text as it is', async () => {
    const one = item('**markdown**');
    keepPlainText(one, 'kept');
    expect(await plainTextOfInSteps(one, async () => undefined)).toBe('kept');
  });
});
