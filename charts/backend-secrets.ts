import type { KvstoreDeploy, KvstoreMode } from '../configs';
import { SECRETS } from './generators/names';

/** One environment variable of the backend that comes from the app Secret, by reference. */
export interface SecretEnvReference {
  /** Environment variable of the service, e.g. `API_TOKEN`. */
  readonly variable: string;
  /** Key in the app Secret (`svc-ai-search-secrets`), e.g. `api-token`. */
  readonly key: string;
  /** The pod starts without the key; a required key missing keeps it in `CreateContainerConfigError`. */
  readonly optional: boolean;
}

/** Where the backend's Redis comes from and how it is reached. */
export interface BackendSecretsOptions {
  /** `KVSTORE_DEPLOY`. @default 'in-cluster' */
  readonly kvstoreDeploy?: KvstoreDeploy;
  /** `KVSTORE_MODE`. @default 'standalone' */
  readonly kvstoreMode?: KvstoreMode;
  /** An embedder is configured (`EMBEDDINGS_PROVIDER` other than `none`). @default false */
  readonly embeddings?: boolean;
}

/**
 * The backend's Secret references, for the Deployment and for `make secrets` alike, so the
 * Secret it creates always has the keys the pod requires.
 *
 * - Always: `API_TOKEN` (required: production refuses requests without it), `AI_API_KEY`
 *   (optional: the extractive chat provider needs none).
 * - With an embedder: `EMBEDDINGS_API_KEY` (optional: without it the embedder uses `AI_API_KEY`);
 *   without one the reference is not written, so the manifests stay as they were.
 * - In-cluster kvstore: `KVSTORE_PASSWORD` (required: the stack's Redis does not start without it
 *   either); `KVSTORE_URL` is the in-cluster address, in the ConfigMap.
 * - External kvstore: `KVSTORE_URL` (required: the only address of the Redis, and it may carry a
 *   password and `rediss`), `KVSTORE_PASSWORD` (optional: overrides the URL's) and, in sentinel
 *   mode only, `KVSTORE_SENTINEL_PASSWORD` (optional: sentinels often have none; any other mode
 *   refuses the variable).
 */
export function backendSecretEnvironment(options: BackendSecretsOptions = {}): SecretEnvReference[] {
  const k = SECRETS.app.keys;
  const refs: SecretEnvReference[] = [
    { variable: 'API_TOKEN', key: k.apiToken, optional: false },
    { variable: 'AI_API_KEY', key: k.aiApiKey, optional: true },
  ];
  if (options.embeddings) refs.push({ variable: 'EMBEDDINGS_API_KEY', key: k.embeddingsApiKey, optional: true });
  if ((options.kvstoreDeploy ?? 'in-cluster') === 'in-cluster') {
    return [...refs, { variable: 'KVSTORE_PASSWORD', key: k.kvstorePassword, optional: false }];
  }
  refs.push(
    { variable: 'KVSTORE_URL', key: k.kvstoreUrl, optional: false },
    { variable: 'KVSTORE_PASSWORD', key: k.kvstorePassword, optional: true },
  );
  if (options.kvstoreMode === 'sentinel')
    refs.push({ variable: 'KVSTORE_SENTINEL_PASSWORD', key: k.kvstoreSentinelPassword, optional: true });
  return refs;
}
