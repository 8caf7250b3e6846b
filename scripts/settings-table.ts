import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SETTINGS, VARIABLES, formatValue, getPath } from '../configs';

const START = '<!-- settings-table:start -->';
const END = '<!-- settings-table:end -->';

/** The README's settings table, generated from the one variable table. */
export function settingsTable(): string {
  const rows = VARIABLES.map((v) => {
    const def = getPath(DEFAULT_SETTINGS, v.path);
    const shown = def === undefined ? '—' : `\`${formatValue(def)}\``;
    const flags = [v.secret ? 'secret' : '', v.synthOnly ? 'synth' : ''].filter(Boolean).join(', ');
    const accepted = v.parser.accepted.replace(/\|/g, '\\|');
    return `| \`${v.name}\` | ${shown} | ${flags || 'service'} | ${v.description}. Accepts ${accepted}. |`;
  });
  return [
    '| Variable | Default | Used by | Meaning |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** README text with the table between its markers replaced. */
export function withSettingsTable(readme: string): string {
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README.md lacks the ${START} … ${END} markers`);
  return `${readme.slice(0, a + START.length)}\n${settingsTable()}\n${readme.slice(b)}`;
}

if (require.main === module) {
  const path = join(__dirname, '..', 'README.md');
  writeFileSync(path, withSettingsTable(readFileSync(path, 'utf8')));
  process.stdout.write(`README.md: settings table regenerated (${VARIABLES.length} variables)\n`);
}
