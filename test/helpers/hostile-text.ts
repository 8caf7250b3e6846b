/**
 * Text shapes that made the Markdown clean-up, the upload heading pattern or the snippets of
 * issue 29 slow: one per pattern family (newlines, spaces, `[`, `![`, `<a`, `<!--`, `<http://`,
 * `#` headings, fences, tables, …), each repeated to `chars` characters. Shared by the unit
 * tests, the seeded fuzz pass and the hostile suite against the real process.
 */
export function repeatTo(unit: string, chars: number): string {
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}

/** Every hostile shape at `chars` characters (about that many UTF-16 units), by name. */
export function hostileTexts(chars: number): Record<string, string> {
  const fill = (unit: string) => repeatTo(unit, chars);
  return {
    newlines: `x${fill('\n')}x`,
    spaces: `x${fill(' ')}x`,
    'no-break spaces': `x${fill('\u00a0')}x`,
    'whitespace mix': fill(' \n\u00a0\t'),
    brackets: fill('['),
    images: fill('!['),
    'unclosed links': fill('[a]('),
    'reference links': fill('[a]['),
    'reference definitions': fill('\n[a]:'),
    'a reference definition then blank lines': `[a]:${fill(' \n')}`,
    '<a': fill('<a'),
    '<': fill('<'),
    comments: fill('<!--'),
    autolinks: fill('<http://'),
    '# headings': fill('#'),
    '# heading lines': fill('# \n'),
    'a heading of spaces': `#${fill(' ')}\n`,
    'a heading of spaces between words': `# a${fill(' ')}#a`,
    quotes: fill('>'),
    digits: fill('1'),
    fences: fill('```\n'),
    'blank lines then a fence': `${fill('\n ')}\`\`\``,
    tables: fill('| a | b |\n|---|---|\n'),
    rules: fill('- \n'),
    'rule marks then text': `${fill('- \n')}x`,
    emphasis: fill(' *a'),
    underscores: fill('_'),
  };
}
