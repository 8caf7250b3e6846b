import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

interface Cruise {
  summary: { violations: { rule: { name: string }; from: string; to: string }[] };
}

/**
 * The import rules' violations in a small tree of files (path → text), written to a temporary
 * folder and cruised by `depcruise` with the repository's own .dependency-cruiser.cjs (what
 * `npm run lint` runs): `rule: from → to` lines, sorted. One run, about a second of CPU.
 */
export function violationsIn(tree: Readonly<Record<string, string>>): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'import-rules-'));
  try {
    for (const [file, text] of Object.entries(tree)) {
      mkdirSync(join(dir, dirname(file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    const run = spawnSync(
      process.execPath,
      [
        join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
        '--config',
        join(ROOT, '.dependency-cruiser.cjs'),
        '--output-type',
        'json',
        '.',
      ],
      { cwd: dir, encoding: 'utf8', timeout: 60_000 },
    );
    if (run.stderr) throw new Error(`depcruise: ${run.stderr}`);
    return (JSON.parse(run.stdout) as Cruise).summary.violations
      .map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)
      .sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
