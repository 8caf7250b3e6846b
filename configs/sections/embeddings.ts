import type { SettingsIssue } from '../errors';
import { bool, int, oneOf, str, url } from '../parsers';
import { variable, type VariableSpec } from '../variables';
import type { AiSettings } from './ai';

/** Who turns text into vectors: nobody, or an OpenAI-compatible `POST {base}/embeddings`. */
export type EmbeddingsProviderName = 'none' | 'openai';

/** How the provider is asked to write each vector: JSON numbers, or base64 of little-endian float32. */
export type EmbeddingsEncoding = 'float' | 'base64';

/** The embedder: the provider that turns passages and queries into vectors (issue 41). */
export interface EmbeddingsSettings {
  /**
   * `none`: no embedder (search stays lexical, nothing changes); `openai`: an OpenAI-compatible
   * embeddings API (OpenAI, Ollama, vLLM, text-embeddings-inference, LiteLLM…). @default 'none'
   */
  readonly provider: EmbeddingsProviderName;
  /** Base URL of the embeddings API (…/v1); `/embeddings` is appended. @default undefined (`AI_BASE_URL`) */
  readonly baseUrl?: string;
  /** API key of the embeddings API. Secret. @default undefined (`AI_API_KEY`) */
  readonly apiKey?: string;
  /** Model name sent to the provider. @default 'text-embedding-3-small' */
  readonly model: string;
  /** Length of every vector; an answer of another length is refused, never stored. @default 1536 */
  readonly dimensions: number;
  /**
   * Send `dimensions` in the request (OpenAI's text-embedding-3 models shorten their vectors to
   * it); off for models and servers that refuse the field. The answer is checked either way.
   * @default false
   */
  readonly sendDimensions: boolean;
  /**
   * `float` (JSON numbers, every server) or `base64` (little-endian float32, about a third of
   * the bytes and far less parsing; OpenAI, vLLM, text-embeddings-inference). @default 'float'
   */
  readonly encoding: EmbeddingsEncoding;
  /**
   * Most texts in one provider call. An answer is parsed in one synchronous step: 64 vectors of
   * 1536 floats as JSON (2 MB) took 26–42 ms on a busy 2-core machine, base64 about 1 ms, so the
   * default keeps a float answer near half that. @default 32
   */
  readonly batchSize: number;
  /** Timeout of one provider call, headers and whole body, milliseconds. @default 30000 */
  readonly timeoutMs: number;
  /** Retries after a failed call (429, 5xx, network, timeout), with exponential backoff and jitter. @default 3 */
  readonly maxRetries: number;
  /**
   * Longest wait before a retry, milliseconds: backoff and `Retry-After` alike. A `Retry-After`
   * longer than this ends the call at once (the caller resumes later). @default 30000
   */
  readonly retryMaxWaitMs: number;
  /** Query embeddings kept (LRU), so a repeated query costs no provider call; 0 keeps none. @default 1000 */
  readonly queryCacheSize: number;
  /** Most passages embedded per item; text past them is found by keyword search only. @default 32 */
  readonly maxPassages: number;
  /**
   * How long a replica's claim on an item version holds the others off it, milliseconds: the
   * claimer embeds it, the others wait for its record; a claimer that died is replaced once its
   * claim runs out. At least one provider call with every retry (`embeddingsIssues`), so a slow
   * provider does not make two replicas embed (and bill) the same version. @default 300000
   */
  readonly claimLeaseMs: number;
}

export const DEFAULT_EMBEDDINGS: EmbeddingsSettings = {
  provider: 'none',
  baseUrl: undefined,
  apiKey: undefined,
  model: 'text-embedding-3-small',
  dimensions: 1536,
  sendDimensions: false,
  encoding: 'float',
  batchSize: 32,
  timeoutMs: 30000,
  maxRetries: 3,
  retryMaxWaitMs: 30000,
  queryCacheSize: 1000,
  maxPassages: 32,
  claimLeaseMs: 300_000,
};

/** Left out of the ConfigMap while no embedder is configured: manifests stay as they were. */
const DORMANT = { dormantWhen: { path: 'embeddings.provider', value: 'none' } } as const;

export const EMBEDDINGS_VARIABLES: readonly VariableSpec[] = [
  variable(
    'EMBEDDINGS_PROVIDER',
    'embeddings.provider',
    oneOf<EmbeddingsProviderName>(['none', 'openai']),
    'Embedder of passages and queries (none: keyword search only)',
    DORMANT,
  ),
  variable(
    'EMBEDDINGS_BASE_URL',
    'embeddings.baseUrl',
    url(['http', 'https']),
    'OpenAI-compatible embeddings API base URL; unset: AI_BASE_URL',
    DORMANT,
  ),
  variable('EMBEDDINGS_API_KEY', 'embeddings.apiKey', str(), 'API key of the embeddings API; unset: AI_API_KEY', {
    secret: true,
  }),
  variable('EMBEDDINGS_MODEL', 'embeddings.model', str(), 'Embedding model name', DORMANT),
  variable(
    'EMBEDDINGS_DIMENSIONS',
    'embeddings.dimensions',
    int({ min: 1, max: 8192 }),
    "Length of every vector (the embedder's and a client's `vector`); answers and vectors of another length are refused",
    { dormantWhen: { ...DORMANT.dormantWhen, unlessChanged: true } },
  ),
  variable(
    'EMBEDDINGS_SEND_DIMENSIONS',
    'embeddings.sendDimensions',
    bool(),
    'Send `dimensions` in the request (text-embedding-3 shortens to it)',
    DORMANT,
  ),
  variable(
    'EMBEDDINGS_ENCODING',
    'embeddings.encoding',
    oneOf<EmbeddingsEncoding>(['float', 'base64']),
    'encoding_format asked for (base64: smaller answers)',
    DORMANT,
  ),
  variable(
    'EMBEDDINGS_BATCH_SIZE',
    'embeddings.batchSize',
    int({ min: 1, max: 2048 }),
    'Most texts in one embeddings call',
    DORMANT,
  ),
  variable(
    'EMBEDDINGS_TIMEOUT_MS',
    'embeddings.timeoutMs',
    int({ min: 100, max: 600000 }),
    'Timeout of one embeddings call (whole answer), ms',
    DORMANT,
  ),
  variable(
    'EMBEDDINGS_MAX_RETRIES',
    'embeddings.maxRetries',
    int({ min: 0, max: 10 }),
    'Retries after a failed embeddings call',
    DORMANT,
  ),
  variable(
    'EMBEDDINGS_RETRY_MAX_WAIT_MS',
    'embeddings.retryMaxWaitMs',
    int({ min: 0, max: 600000 }),
    'Longest wait before a retry (backoff or Retry-After), ms; a longer Retry-After ends the call',
    DORMANT,
  ),
  variable(
    'EMBEDDINGS_QUERY_CACHE_SIZE',
    'embeddings.queryCacheSize',
    int({ min: 0, max: 1000000 }),
    'Query embeddings kept (LRU); 0 keeps none',
    DORMANT,
  ),
  variable(
    'EMBEDDINGS_MAX_PASSAGES',
    'embeddings.maxPassages',
    int({ min: 1, max: 10000 }),
    'Most passages embedded per item',
    DORMANT,
  ),
  variable(
    'EMBEDDINGS_CLAIM_LEASE_MS',
    'embeddings.claimLeaseMs',
    int({ min: 1000, max: 86_400_000 }),
    "How long a replica's claim on an item version holds the other replicas off embedding it, ms (a claimer that died is replaced after it); at least one call with all its retries",
    DORMANT,
  ),
];

/**
 * The longest one embeddings call can take with its retries, ms: every attempt timing out and the
 * longest wait before each retry.
 */
export function longestEmbeddingCallMs(e: EmbeddingsSettings): number {
  return e.timeoutMs * (e.maxRetries + 1) + e.retryMaxWaitMs * e.maxRetries;
}

/** Where the embedder's calls go: its own URL and key, else the chat provider's. */
export interface EmbeddingsEndpoint {
  /** `EMBEDDINGS_BASE_URL`, else `AI_BASE_URL`. */
  readonly baseUrl: string;
  /** `EMBEDDINGS_API_KEY`, else `AI_API_KEY`; absent for servers that need none. Secret. */
  readonly apiKey?: string;
}

/** The embedder's endpoint: each field its own setting, else the chat provider's (`AI_BASE_URL`, `AI_API_KEY`). */
export function embeddingsEndpoint(settings: {
  readonly embeddings: EmbeddingsSettings;
  readonly ai: AiSettings;
}): EmbeddingsEndpoint {
  const apiKey = settings.embeddings.apiKey ?? settings.ai.apiKey;
  return {
    baseUrl: settings.embeddings.baseUrl ?? settings.ai.baseUrl,
    ...(apiKey === undefined ? {} : { apiKey }),
  };
}

/**
 * Most numbers one embeddings answer may hold (`EMBEDDINGS_BATCH_SIZE` × `EMBEDDINGS_DIMENSIONS`):
 * the client buffers one answer whole, up to 32 bytes a number as (indented) JSON, so this keeps
 * the largest answer it accepts within 32 MiB.
 */
export const EMBEDDINGS_MAX_ANSWER_NUMBERS = 1024 * 1024;

/** Rules between the embeddings settings. */
export function embeddingsIssues(e: EmbeddingsSettings): SettingsIssue[] {
  const issues: SettingsIssue[] = [];
  if (e.batchSize * e.dimensions > EMBEDDINGS_MAX_ANSWER_NUMBERS) {
    issues.push({
      code: 'ERR_SETTINGS_CONFLICT',
      variable: 'EMBEDDINGS_BATCH_SIZE',
      value: String(e.batchSize),
      message: `EMBEDDINGS_BATCH_SIZE=${e.batchSize} × EMBEDDINGS_DIMENSIONS=${e.dimensions} is more than ${EMBEDDINGS_MAX_ANSWER_NUMBERS} numbers in one answer; accepted: a batch of at most ${Math.floor(EMBEDDINGS_MAX_ANSWER_NUMBERS / e.dimensions)} texts at these dimensions`,
    });
  }
  const longest = longestEmbeddingCallMs(e);
  if (e.provider !== 'none' && e.claimLeaseMs < longest) {
    issues.push({
      code: 'ERR_SETTINGS_CONFLICT',
      variable: 'EMBEDDINGS_CLAIM_LEASE_MS',
      value: String(e.claimLeaseMs),
      message: `EMBEDDINGS_CLAIM_LEASE_MS=${e.claimLeaseMs} is shorter than one embeddings call with its retries (EMBEDDINGS_TIMEOUT_MS=${e.timeoutMs} × (EMBEDDINGS_MAX_RETRIES=${e.maxRetries} + 1) + EMBEDDINGS_RETRY_MAX_WAIT_MS=${e.retryMaxWaitMs} × ${e.maxRetries} = ${longest} ms): another replica would embed the same item version while it is under way; accepted: at least ${longest}`,
    });
  }
  return issues;
}
