/**
 * `make secrets`: creates or updates every Secret the stack references and restarts the pods
 * whose Secret changed (tools/apply-secrets.ts does the work).
 */
import { SettingsError } from '../configs';
import { applySecrets } from '../tools/apply-secrets';

try {
  applySecrets(process.env);
} catch (e) {
  process.stderr.write(`make secrets: ${e instanceof SettingsError || e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
