import { parseSettings, settingsInputFromEnv, VARIABLES, type Env, type Settings, type SettingsInput } from '../configs';
import { stackNames } from './generators/names';

/** `DATA_DIR` in the cluster: a writable emptyDir, since the root filesystem is read-only. */
export const STACK_DATA_DIR = '/var/lib/svc-ai-search';

/**
 * Variables the synth never reads: `NODE_ENV` describes the shell that synthesizes, not the
 * cluster; the service's secrets (`API_TOKEN`, `AI_API_KEY`, `KVSTORE_URL`, `KVSTORE_PASSWORD`,
 * `RATELIMIT_STORAGE_URL`, ...) live in the cluster's Secret, so their values never enter the
 * synthesized settings. The alert router's secrets are read, but only for their presence.
 */
export const IGNORED_AT_SYNTH: readonly string[] = [
  'NODE_ENV',
  ...VARIABLES.filter((v) => v.secret && !v.path.startsWith('alerting.')).map((v) => v.name),
];

/**
 * What the deployed stack changes about the settings the environment gives: drops
 * `IGNORED_AT_SYNTH`; defaults `ENVIRONMENT=production`, `DATA_DIR` and, only when an Ingress is
 * generated (`INGRESS_HOST`), `TRUST_PROXY=1` (the controller's hop; without one a client reaching
 * the Service directly would choose its own rate-limit key through `X-Forwarded-For`), which a variable set at synth time still overrides; and always points
 * `KVSTORE_URL` at the kvstore it deploys (`redis://kvstore:6379`, with `NAME_PREFIX`; the
 * password comes from the Secret).
 */
export function stackSettingsInput(env: Env): SettingsInput {
  const kept: Record<string, string | undefined> = { ...env };
  for (const name of IGNORED_AT_SYNTH) delete kept[name];
  const input = settingsInputFromEnv(kept);
  return {
    ...input,
    service: { environment: 'production', ...(input.deploy?.ingressHost ? { trustProxy: 1 } : {}), dataDir: STACK_DATA_DIR, ...input.service },
    kvstore: { ...input.kvstore, url: stackNames(input.deploy?.namePrefix ?? '').kvstoreUrl },
  };
}

/**
 * The settings `cdk8s synth` deploys: `loadSettings(env)` plus the stack's own choices
 * (`stackSettingsInput`), through the same `parseSettings`, so a bad value fails synth with a
 * message naming the variable.
 */
export function loadStackSettings(env: Env = process.env): Settings {
  return parseSettings(stackSettingsInput(env));
}
