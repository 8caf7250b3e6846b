import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SETTINGS, VARIABLES, formatValue, getPath } from '../configs';

const START = '<!-- settings-table:start -->';
const END = '<!-- settings-table:end -->';

/** The settings table of docs/settings.md, generated from the one variable table. */
export function settingsTable(): string {
  const rows = VARIABLES.map((v) => {
    const def = getPath(DEFAULT_SETTINGS, v.path);
    const shown = def === undefined ? '—' : `\`${formatValue(def)}\``;
    const flags = [v.secret ? 'secret' : '', v.synthOnly ? 'synth' : ''].filter(Boolean).join(', ');
    const accepted = v.parser.accepted.replace(/\|/g, '\\|');
    return `| \`${v.name}\` | ${shown} | ${flags || 'service'} | ${v.description}. Accepts ${accepted}. |`;
  });
  return ['| Variable | Default | Used by | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** Where the table lives, relative to the repository root (the README links to it). */
export const SETTINGS_DOC = 'docs/settings.md';

/** The document's text with the table between its markers replaced. */
export function withSettingsTable(doc: string): string {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${SETTINGS_DOC} lacks the ${START} … ${END} markers`);
  return `${doc.slice(0, a + START.length)}\n${settingsTable()}\n${doc.slice(b)}`;
}

if (require.main === module) {
  const path = join(__dirname, '..', SETTINGS_DOC);
  writeFileSync(path, withSettingsTable(readFileSync(path, 'utf8')));
  process.stdout.write(`${SETTINGS_DOC}: settings table regenerated (${VARIABLES.length} variables)\n`);
}
