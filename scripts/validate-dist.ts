/**
 * `make validate`: judges a synthesized `dist/` with the real tools. Kubernetes schemas and
 * references, promtool check config / check rules / test rules, amtool check-config and
 * `amtool config routes test` for every routing case, and no secret value in any file.
 * Reads the settings from the same environment `make synth` used. Then synthesizes the other
 * `MONITORING_MODE` from the same environment into a temp folder and judges it too (operator
 * mode: the custom resources against the prometheus-operator schemas, the PrometheusRule's
 * groups under promtool, the AlertmanagerConfig's routing under amtool). Exits 1 on any failure.
 *
 *   npx ts-node -T scripts/validate-dist.ts dist
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStackSettings } from '../charts';
import { parseManifests, readDist } from '../tools/read-manifests';
import { validateStack, type CheckResult } from '../tools/validate';
import { SettingsError } from '../configs';
import { synth } from '../app/main';
import { promTools, requirePromTools } from '../tools/harness/prom-tools';

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

/** The `MONITORING_MODE` that `env` does not synthesize. */
export function otherMode(env: NodeJS.ProcessEnv): 'standalone' | 'operator' {
  return loadStackSettings(env).deploy.monitoringMode === 'operator' ? 'standalone' : 'operator';
}

/** Synthesizes `env` with the other `MONITORING_MODE` into a temp folder and runs every check on it. */
export function validateOtherMode(env: NodeJS.ProcessEnv = process.env): { mode: string; results: CheckResult[] } {
  const mode = otherMode(env);
  const modeEnv = { ...env, MONITORING_MODE: mode };
  const dir = mkdtempSync(join(tmpdir(), 'svc-ai-search-validate-mode-'));
  try {
    synth(modeEnv, dir, () => undefined);
    return { mode, results: validateDist(dir, modeEnv) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
    process.stdout.write(
      `${dir} (MONITORING_MODE=${loadStackSettings(process.env).deploy.monitoringMode}):\n${formatResults(results)}\n`,
    );
    const other = validateOtherMode();
    process.stdout.write(
      `\nMONITORING_MODE=${other.mode}, synthesized into a temp folder:\n${formatResults(other.results)}\n`,
    );
    const all = [...results, ...other.results];
    const failed = all.filter((r) => !r.ok).length;
    process.stdout.write(failed ? `\n${failed} check(s) failed\n` : `\nall ${all.length} checks passed\n`);
    process.exit(failed ? 1 : 0);
  } catch (e) {
    process.stderr.write(`validate: ${e instanceof SettingsError || e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}

if (require.main === module) main();
