/**
 * `make validate`: judges a synthesized `dist/` with the real tools. Kubernetes schemas and
 * references, promtool check config / check rules / test rules, amtool check-config and
 * `amtool config routes test` for every routing case, and no secret value in any file.
 * Reads the settings from the same environment `make synth` used. Exits 1 on any failure.
 *
 *   npx ts-node -T scripts/validate-dist.ts dist
 */
import { loadStackSettings, parseManifests, readDist } from '../charts';
import { validateStack, type CheckResult } from '../tools/validate';
import { SettingsError } from '../configs';
import { promTools, requirePromTools } from '../test/harness/prom-tools';

/** Runs every check on the folder `dir`; returns the results. */
export function validateDist(dir: string, env: NodeJS.ProcessEnv = process.env): CheckResult[] {
  const files = readDist(dir);
  if (files.size === 0) throw new Error(`no manifests in ${dir}: run make synth first`);
  return validateStack({
    manifests: parseManifests(files.values()),
    settings: loadStackSettings(env),
    tools: promTools,
    leakCheck: { files, env },
  });
}

/** One line per check, the detail of failures indented below. */
export function formatResults(results: readonly CheckResult[]): string {
  return results
    .map((r) => {
      const head = `${r.ok ? 'ok  ' : 'FAIL'} ${r.check}`;
      return r.ok || !r.detail ? head : `${head}\n${r.detail.replace(/^/gm, '     ')}`;
    })
    .join('\n');
}

function main(): void {
  const dir = process.argv[2] ?? 'dist';
  try {
    requirePromTools();
    const results = validateDist(dir);
    process.stdout.write(`${formatResults(results)}\n`);
    const failed = results.filter((r) => !r.ok).length;
    process.stdout.write(failed ? `\n${failed} check(s) failed\n` : `\nall ${results.length} checks passed\n`);
    process.exit(failed ? 1 : 0);
  } catch (e) {
    process.stderr.write(`validate: ${e instanceof SettingsError || e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}

if (require.main === module) main();
