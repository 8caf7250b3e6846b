import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { markdownSections } from '../../../../service/content/parse/markdown-sections';
import { markdownSectionsBefore } from '../../../../tools/oracles/regex-text-passes';
import { hostileTexts, repeatTo } from '../../../helpers/hostile-text';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';
import { cpuMs } from '../../../helpers/cpu-time';

const ROOT = join(__dirname, '..', '..', '..', '..');

describe('markdownSections', () => {
  it(
    'splits documents as it did before issue 29: the repository’s docs and generated ones',
    () => {
      for (const f of ['README.md', ...readdirSync(join(ROOT, 'docs')).map((x) => `docs/${x}`)]) {
        const text = readFileSync(join(ROOT, f), 'utf8');
        expect(markdownSections(f, text)).toEqual(markdownSectionsBefore(f, text));
      }
      const pieces = ['# ', '## ', '```', '~~~', '\n', '\r\n', '\r', 'a', 'b c', ' ', '#', '##'];
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 30 }), (ps) => {
          const text = ps.join('');
          expect(markdownSections('docs/x.md', text)).toEqual(markdownSectionsBefore('docs/x.md', text));
        }),
        { numRuns: 3000, seed: 29 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});

describe('markdownSections on hostile Markdown', () => {
  const shapes: Record<string, string> = {
    ...hostileTexts(1_000_000),
    '## headings': repeatTo('## \n', 1_000_000),
    'a heading of punctuation': `## ${repeatTo('-!', 1_000_000)}\nbody`,
    'a heading of hyphens and letters': `## ${repeatTo('a-', 1_000_000)}\nbody`,
  };
  it.each(Object.entries(shapes))('splits a 1 MB document of %s in well under a second', (_name, text) => {
    const spent = cpuMs(() => {
      markdownSections('docs/hostile.md', text);
    });
    expect(spent).toBeLessThan(1000);
  });
});
