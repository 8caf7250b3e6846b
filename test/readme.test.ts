import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VARIABLES } from '../configs';
import { withSettingsTable } from '../scripts/settings-table';

describe('README', () => {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');

  it('has the settings table in sync with configs/ (run `make readme` to regenerate)', () => {
    expect(readme).toBe(withSettingsTable(readme));
  });

  it('names every environment variable', () => {
    for (const v of VARIABLES) expect(readme).toContain(`\`${v.name}\``);
  });

  it('gives the two commands', () => {
    expect(readme).toContain('make run');
    expect(readme).toContain('make test');
  });
});
