import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { dashboardFileName, loadStackSettings, SearchBackendStack, stackWarnings } from '../charts';
import { SettingsError, type Env } from '../configs';

/** Folder of `outdir` that holds the Grafana dashboard JSON: a subfolder, so `kubectl apply -f dist/` never reads it. */
export const DASHBOARD_DIR = 'grafana';

/**
 * Synthesizes the stack from `env` (settings variables) into `outdir` (default: `CDK8S_OUTDIR`,
 * set by `cdk8s synth`, else `dist`), and the Grafana dashboard into `<outdir>/grafana/` for
 * importing by hand. Throws `SettingsError` naming any bad variable. `warn` receives each of
 * `stackWarnings` (default: loudly to stderr).
 */
export function synth(env: Env, outdir?: string, warn: (message: string) => void = loudly): App {
  const settings = loadStackSettings(env);
  for (const w of stackWarnings(settings)) warn(w);
  const app = new App(outdir ? { outdir } : {});
  const stack = new SearchBackendStack(app, 'stack', { settings });
  app.synth();
  const dir = join(app.outdir, DASHBOARD_DIR);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, dashboardFileName(stack.settings)), stack.dashboard.text);
  return app;
}

function loudly(message: string): void {
  process.stderr.write(`\n*** WARNING ***\n${message}\n\n`);
}

if (require.main === module) {
  try {
    synth(process.env);
  } catch (e) {
    if (e instanceof SettingsError) {
      process.stderr.write(`cdk8s synth: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
}
