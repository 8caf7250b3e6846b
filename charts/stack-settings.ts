import {
  parseSettings,
  SettingsError,
  settingsInputFromEnv,
  VARIABLES,
  type Env,
  type Settings,
  type SettingsInput,
  type SettingsIssue,
} from '../configs';
import { stackNames } from './generators/names';

/** `DATA_DIR` in the cluster: a writable emptyDir, since the root filesystem is read-only. */
export const STACK_DATA_DIR = '/var/lib/svc-ai-search';

/**
 * `INDEX_DIR` in the cluster: the persisted search segment, in the same emptyDir as `DATA_DIR`
 * (the backend uses the Redis store there, so nothing else is in it). An emptyDir survives a
 * container restart (a crash, an OOM kill, a failed liveness probe), so the restarted container
 * loads the segment instead of re-indexing; a new pod (rolling update, rescheduling, HPA scale-up)
 * starts with an empty one and builds the index from Redis, then writes its segment.
 */
export const STACK_INDEX_DIR = `${STACK_DATA_DIR}/search-index`;

/** Folder in the backend's container where its synonyms ConfigMap is mounted, read-only. */
export const STACK_SYNONYMS_DIR = '/etc/svc-ai-search/synonyms';

/**
 * `SEARCH_SYNONYMS_FILE` in the cluster: the file at synth time (`SEARCH_SYNONYMS_FILE` in the
 * synthesizing shell) becomes the `backend-synonyms` ConfigMap, mounted here.
 */
export const STACK_SYNONYMS_FILE = `${STACK_SYNONYMS_DIR}/synonyms.txt`;

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
 * What `KVSTORE_URL` holds in the synthesized settings with `KVSTORE_DEPLOY=external`: the real URL
 * (it may carry a password) is in the Secret and never read at synth. This stand-in only says
 * "there is a URL", so the settings' rules (a cluster or sentinel needs a URL; the kvstore alerts
 * apply) judge the deployment the backend will run; it is never written to a manifest.
 */
export const EXTERNAL_KVSTORE_URL = 'redis://external-kvstore.invalid:6379';

/**
 * What the deployed stack changes about the settings the environment gives: drops
 * `IGNORED_AT_SYNTH`; defaults `ENVIRONMENT=production`, `DATA_DIR`, `INDEX_DIR` (`STACK_INDEX_DIR`) and, only when an Ingress is
 * generated (`INGRESS_HOST`), `TRUST_PROXY=1` (the controller's hop; without one a client reaching
 * the Service directly would choose its own rate-limit key through `X-Forwarded-For`), which a variable set at synth time still overrides; and sets
 * `KVSTORE_URL`: with `KVSTORE_DEPLOY=in-cluster` (default) to the kvstore it deploys
 * (`redis://kvstore:6379`, with `NAME_PREFIX`; the password comes from the Secret), with
 * `external` to `EXTERNAL_KVSTORE_URL` (the real one comes from the Secret). With the in-cluster
 * kvstore it also defaults `KVSTORE_DURABILITY=primary-disk`: that Redis is 7.2 with
 * `appendonly yes` and no replica, so waiting for its append-only file fsync (WAITAOF 1 0) is the
 * strongest level it can give while staying writable (a `replica` level would refuse every write).
 */
export function stackSettingsInput(env: Env): SettingsInput {
  const kept: Record<string, string | undefined> = { ...env };
  for (const name of IGNORED_AT_SYNTH) delete kept[name];
  const input = settingsInputFromEnv(kept);
  return {
    ...input,
    service: {
      environment: 'production',
      ...(input.deploy?.ingressHost ? { trustProxy: 1 } : {}),
      dataDir: STACK_DATA_DIR,
      ...input.service,
    },
    search: { indexDir: STACK_INDEX_DIR, ...input.search },
    kvstore: {
      ...(input.deploy?.kvstoreDeploy === 'external' ? {} : { durability: 'primary-disk' as const }),
      ...input.kvstore,
      url:
        input.deploy?.kvstoreDeploy === 'external'
          ? EXTERNAL_KVSTORE_URL
          : stackNames(input.deploy?.namePrefix ?? '').kvstoreUrl,
    },
  };
}

/**
 * Rules of the deployed stack only (the service never sees `KVSTORE_DEPLOY`): the in-cluster
 * kvstore is one standalone Redis, so `KVSTORE_MODE` must be `standalone` with it.
 */
export function stackIssues(settings: Settings): SettingsIssue[] {
  const mode = settings.kvstore.topology.mode;
  if (settings.deploy.kvstoreDeploy === 'in-cluster' && mode !== 'standalone') {
    return [
      {
        code: 'ERR_SETTINGS_CONFLICT',
        variable: 'KVSTORE_MODE',
        value: JSON.stringify(mode),
        message:
          `KVSTORE_MODE="${mode}" needs a Redis ${mode === 'cluster' ? 'Cluster' : 'with sentinels'}, but KVSTORE_DEPLOY=in-cluster deploys one standalone Redis; ` +
          'accepted: KVSTORE_DEPLOY=external (the URL in the Secret key kvstore-url, docs/stack.md), or KVSTORE_MODE=standalone',
      },
    ];
  }
  return [];
}

/**
 * The settings `cdk8s synth` deploys: `loadSettings(env)` plus the stack's own choices
 * (`stackSettingsInput`), through the same `parseSettings`, so a bad value fails synth with a
 * message naming the variable; then `stackIssues`.
 */
export function loadStackSettings(env: Env = process.env): Settings {
  const settings = parseSettings(stackSettingsInput(env));
  const issues = stackIssues(settings);
  if (issues.length) throw new SettingsError(issues);
  return settings;
}
