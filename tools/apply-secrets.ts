import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parseSettings, type Env, type KvstoreDeploy, type Settings } from '../configs';
import { backendSecretEnvironment, type SecretEnvReference } from '../charts/backend-secrets';
import { SECRETS, stackNames, type StackNames } from '../charts/generators/names';
import { loadStackSettings, stackSettingsInput } from '../charts/stack-settings';

/** Environment variable → key (file name) in the Alertmanager Secret. */
const ALERTMANAGER_KEYS: Readonly<Record<string, string>> = {
  CHAT_WEBHOOK_URL: SECRETS.alertmanager.keys.chatWebhookUrl,
  SMTP_PASSWORD: SECRETS.alertmanager.keys.smtpPassword,
  WEBHOOK_BEARER_TOKEN: SECRETS.alertmanager.keys.webhookBearerToken,
  INCIDENT_SERVICE_KEY: SECRETS.alertmanager.keys.incidentServiceKey,
};

/** Variables the backend does not start without (non-optional Secret references) with the in-cluster kvstore. */
export const REQUIRED_SECRET_VARIABLES: readonly string[] = backendSecretEnvironment()
  .filter((r) => !r.optional)
  .map((r) => r.variable);

/** A Secret object as `kubectl apply` takes it. */
export interface SecretManifest {
  readonly apiVersion: 'v1';
  readonly kind: 'Secret';
  readonly metadata: { readonly name: string; readonly namespace: string; readonly labels: Record<string, string> };
  readonly type: 'Opaque';
  readonly stringData: Record<string, string>;
}

/** `KEY=VALUE` lines (blank lines and `#` comments skipped; surrounding quotes removed). */
export function parseSecretsFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Z_][A-Z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m || line.trim().startsWith('#')) continue;
    out[m[1]] = m[2].replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

/**
 * The Secrets the stack references, from the secret variables in `values`: the app Secret with
 * the keys of `refs` (the backend's references, `backendSecretEnvironment(...)`; required ones
 * must be present) and, when any destination secret is set, the Alertmanager Secret. Throws
 * `Error` naming the missing variables.
 */
export function secretManifests(
  values: Env,
  names: StackNames,
  namespace: string,
  refs: readonly SecretEnvReference[] = backendSecretEnvironment(),
): SecretManifest[] {
  const missing = refs.filter((r) => !r.optional && !values[r.variable]).map((r) => r.variable);
  if (missing.length)
    throw new Error(
      `missing ${missing.join(', ')}: set them in the environment or the secrets file (SECRETS_FILE); the backend does not start without them`,
    );
  const pick = (keys: Readonly<Record<string, string>>) =>
    Object.fromEntries(Object.entries(keys).flatMap(([v, key]) => (values[v] ? [[key, values[v] as string]] : [])));
  const labels = { 'app.kubernetes.io/instance': names.instance, 'app.kubernetes.io/managed-by': 'make-secrets' };
  const secret = (name: string, stringData: Record<string, string>): SecretManifest => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels },
    type: 'Opaque',
    stringData,
  });
  const out = [secret(names.appSecret, pick(Object.fromEntries(refs.map((r) => [r.variable, r.key]))))];
  const alert = pick(ALERTMANAGER_KEYS);
  if (Object.keys(alert).length) out.push(secret(names.alertmanagerSecret, alert));
  return out;
}

/**
 * With `KVSTORE_DEPLOY=external`, the settings the backend will run with the real `KVSTORE_URL`
 * (and password) from `values`: a URL the service would refuse (scheme, a database on a Cluster)
 * fails here, before it reaches the Secret. Throws `SettingsError` (passwords masked).
 */
export function checkExternalKvstore(env: Env, values: Env): Settings {
  const input = stackSettingsInput(env);
  return parseSettings({ ...input, kvstore: { ...input.kvstore, url: values.KVSTORE_URL } });
}

/** Workloads that read each Secret: restarted when `kubectl apply` reports it changed. */
export function readersOf(names: StackNames, kvstoreDeploy: KvstoreDeploy = 'in-cluster'): Record<string, string[]> {
  return {
    [names.appSecret]: [
      `deployment/${names.backend}`,
      ...(kvstoreDeploy === 'in-cluster' ? [`statefulset/${names.kvstore}`] : []),
    ],
    [names.alertmanagerSecret]: [`deployment/${names.alertmanager}`],
  };
}

function kubectl(args: string[], input?: string): string {
  const r = spawnSync('kubectl', args, {
    input,
    encoding: 'utf8',
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'inherit'],
  });
  if (r.error) throw new Error(`kubectl: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`kubectl ${args[0]} failed (exit ${r.status})`);
  return r.stdout;
}

/**
 * `make secrets` (scripts/secrets.ts): reads the secret variables from the environment, else from `SECRETS_FILE`
 * (default `.secrets.env`, never committed), creates or updates every Secret through stdin (no
 * value on a command line or in a log), then restarts the workloads whose Secret changed.
 */
export function applySecrets(env: Env): void {
  const file = env.SECRETS_FILE ?? '.secrets.env';
  const values: Env = { ...(existsSync(file) ? parseSecretsFile(readFileSync(file, 'utf8')) : {}), ...env };
  const settings = loadStackSettings(env);
  const names = stackNames(settings.deploy.namePrefix);
  const kvstoreDeploy = settings.deploy.kvstoreDeploy;
  const refs = backendSecretEnvironment({
    kvstoreDeploy,
    kvstoreMode: settings.kvstore.topology.mode,
    embeddings: settings.embeddings.provider !== 'none',
  });
  const manifests = secretManifests(values, names, settings.deploy.namespace, refs);
  if (kvstoreDeploy === 'external') checkExternalKvstore(env, values);
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests });
  const out = kubectl(['apply', '-f', '-'], list);
  process.stdout.write(out);
  const readers = readersOf(names, kvstoreDeploy);
  for (const m of manifests) {
    if (!new RegExp(`secret/${m.metadata.name} (configured)`).test(out)) continue;
    for (const w of readers[m.metadata.name] ?? []) {
      process.stdout.write(kubectl(['-n', settings.deploy.namespace, 'rollout', 'restart', w]));
    }
  }
}
