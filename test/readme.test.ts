import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { VARIABLES } from '../configs';
import { SETTINGS_DOC, withSettingsTable } from '../scripts/settings-table';

const ROOT = join(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The relative link targets of a Markdown file (outside code blocks), without their anchors. */
function relativeLinks(file: string): string[] {
  const text = read(file).replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z]+:/.test(target))
    .map((target) => join(dirname(file), target));
}

describe('README', () => {
  const readme = read('README.md');

  it('gives the two commands', () => {
    expect(readme).toContain('make run');
    expect(readme).toContain('make test');
  });

  // Issue 38: what a first hour needs stays here, the reference parts live in docs/.
  it('stays under 30 KB', () => {
    expect(Buffer.byteLength(readme)).toBeLessThan(30 * 1024);
  });

  it('links to the settings table and to files that exist', () => {
    expect(relativeLinks('README.md')).toContain(SETTINGS_DOC);
    expect(relativeLinks('README.md').filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });
});

describe(SETTINGS_DOC, () => {
  const doc = read(SETTINGS_DOC);

  it('has the settings table in sync with configs/ (run `make readme` to regenerate)', () => {
    expect(doc).toBe(withSettingsTable(doc));
  });

  it('names every environment variable', () => {
    for (const v of VARIABLES) expect(doc).toContain(`\`${v.name}\``);
  });
});

describe('BENCHMARKS.md', () => {
  const lines = read('BENCHMARKS.md').split('\n');

  // Issue 38: today's figures fit on two screens at the top; the dated runs follow the History heading.
  it('opens with the current figures, on two screens, before the history', () => {
    const history = lines.findIndex((l) => l.startsWith('## History'));
    expect(history).toBeGreaterThan(0);
    expect(history).toBeLessThanOrEqual(110);
  });

  it('links to files that exist', () => {
    expect(relativeLinks('BENCHMARKS.md').filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });
});
