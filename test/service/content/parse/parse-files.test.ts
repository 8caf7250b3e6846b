import fc from 'fast-check';
import matter from 'gray-matter';
import {
  frontMatter,
  leadingHeading,
  parseFile,
  parseFrontMatterYaml,
} from '../../../../service/content/parse/parse-files';
import { HEADING_BEFORE } from '../../../../tools/oracles/regex-text-passes';
import { hostileTexts, repeatTo } from '../../../helpers/hostile-text';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';
import { cpuMs } from '../../../helpers/cpu-time';

const refuse = () => {
  throw new Error('only YAML or JSON front matter is accepted');
};
/**
 * gray-matter as `parse-files.ts` called it before issue 29, the oracle of the split; its YAML
 * engine is ours (dates stay strings since issue 37), so what differs is the split alone.
 */
function grayMatter(text: string): { data: unknown; content: string } | 'error' {
  try {
    const engines = {
      yaml: { parse: parseFrontMatterYaml },
      js: refuse,
      javascript: refuse,
      coffee: refuse,
      coffeescript: refuse,
      cson: refuse,
    };
    const p = matter(text, { engines } as never);
    const d = p.data as unknown;
    return { data: d && typeof d === 'object' && !Array.isArray(d) ? d : {}, content: p.content };
  } catch {
    return 'error';
  }
}

describe('the leading heading of an uploaded Markdown file', () => {
  it(
    'is what the old pattern found, on generated headings',
    () => {
      const pieces = ['#', ' ', '\n', '\t', 'a', 'b', '\u2028', '\r', '##', '  ', '\n\n', '\u00a0', 'x y'];
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 30 }), (ps) => {
          const body = ps.join('');
          const m = HEADING_BEFORE.exec(body);
          expect(leadingHeading(body)).toEqual(m ? { title: m[1], end: m[0].length } : undefined);
        }),
        { numRuns: 5000, seed: 29 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('reads ordinary headings', () => {
    expect(leadingHeading('# Title\n\nBody')).toEqual({ title: 'Title', end: 9 });
    expect(leadingHeading('  ## Closed ##  \nBody')?.title).toBeUndefined();
    expect(leadingHeading('# Closed ##  \nBody')).toEqual({ title: 'Closed', end: 14 });
    expect(leadingHeading('#NoSpace')).toBeUndefined();
  });

  it.each([
    ['a heading of 1 MB of spaces', `#${repeatTo(' ', 1_000_000)}\nbody`],
    ['a heading of 1 MB of spaces and nothing else', `#${repeatTo(' ', 1_000_000)}`],
    ["1 MB of spaces between two words (the old pattern's cubic case)", `# a${repeatTo(' ', 1_000_000)}#a`],
    ['1 MB of # and spaces', repeatTo('# ', 1_000_000)],
    ['a title of 1 MB of words', `# ${repeatTo('word ', 1_000_000)}`],
  ])('finds the heading of %s in well under a second', (_name, body) => {
    const spent = cpuMs(() => {
      leadingHeading(body);
    });
    expect(spent).toBeLessThan(1000);
  });
});

describe('front matter', () => {
  it(
    'is split and parsed as gray-matter did, on generated files',
    () => {
      const pieces = [
        '---',
        '\n',
        ' ',
        '#',
        'a: 1',
        'b: x',
        'json',
        'yaml',
        'js',
        '{"t": 2}',
        '\r\n',
        '-',
        'title: T',
        '\ufeff',
        ':',
        '[',
        ']',
        'YAML',
        '# c',
        '\n---\n',
        '2024-01-05',
        'x',
      ];
      fc.assert(
        fc.property(fc.boolean(), fc.array(fc.constantFrom(...pieces), { maxLength: 14 }), (fenced, ps) => {
          const text = (fenced ? '---' : '') + ps.join('');
          let ours: ReturnType<typeof grayMatter>;
          try {
            ours = frontMatter(text);
          } catch {
            ours = 'error';
          }
          expect(JSON.stringify(ours)).toBe(JSON.stringify(grayMatter(text)));
        }),
        { numRuns: 5000, seed: 29 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('keeps dates as the strings they were written as (no roll-over) and refuses JavaScript', () => {
    expect(frontMatter('---\ntitle: T\ndate: 2024-01-05\n---\nBody')).toEqual({
      data: { title: 'T', date: '2024-01-05' },
      content: 'Body',
    });
    // js-yaml 3's timestamps rolled these over to 2024-03-01, 2025-02-14 and 2024-02-04T02:01Z (issue 37).
    for (const date of ['2024-02-30', '2024-13-45', '2024-02-03 25:61:00', '2024-01-05T10:00:00+02:00']) {
      expect(frontMatter(`---\ndate: ${date}\n---\n`).data).toEqual({ date });
    }
    expect(() => frontMatter('---js\n{ title: "x" }\n---\n')).toThrow(/only YAML or JSON/);
    expect(frontMatter('---json\n{"title": "J"}\n---\nB')).toEqual({ data: { title: 'J' }, content: 'B' });
  });
});

describe('parseFile on hostile Markdown', () => {
  // gray-matter's own comment test took 19 s on 100k blank lines of front matter.
  const shapes: Record<string, string> = {
    ...hostileTexts(1_000_000),
    'front matter of blank lines': `---\n${repeatTo('\n', 1_000_000)}title: T\n---\nbody`,
    'front matter of blank lines with spaces': `---\n${repeatTo(' \n', 1_000_000)}\n---\nbody`,
    'front matter of comments': `---\n${repeatTo('  \n# c\n', 1_000_000)}---\n# Heading\nbody`,
    'deeply nested front matter': `---\na: ${repeatTo('[', 1_000_000)}\n---\n`,
  };
  it.each(Object.entries(shapes))('parses a 1 MB file of %s, or refuses it, in well under a second', (_name, text) => {
    const spent = cpuMs(() => {
      try {
        parseFile('hostile.md', 'md', text);
      } catch (e) {
        expect((e as Error).name).toBe('FileParseError');
      }
    });
    expect(spent).toBeLessThan(1000);
  });
});
