import type { Logger } from 'pino';
import { embeddingsEndpoint, type Settings } from '../../configs';
import { OpenAiEmbedder } from './openai-embedder';
import type { Embedder, EmbeddingCallObserver, TokenCounter } from './types';

/** What the embedder needs from the composition root. */
export interface EmbedderDeps {
  readonly tokens: TokenCounter;
  readonly logger: Logger;
  readonly observer?: EmbeddingCallObserver;
  /** Estimates the tokens of texts whose answer reported no usage (the chat's tokenizer). */
  readonly estimateTokens?: (texts: readonly string[]) => number;
}

/**
 * The embedder the settings ask for: none with `EMBEDDINGS_PROVIDER=none`, else an
 * `OpenAiEmbedder` on `embeddingsEndpoint(settings)` (its own URL and key, else the chat's).
 */
export function createEmbedder(
  settings: Pick<Settings, 'embeddings' | 'ai'>,
  deps: EmbedderDeps,
): Embedder | undefined {
  const e = settings.embeddings;
  if (e.provider === 'none') return undefined;
  const endpoint = embeddingsEndpoint(settings);
  return new OpenAiEmbedder({
    ...endpoint,
    model: e.model,
    dimensions: e.dimensions,
    sendDimensions: e.sendDimensions,
    encoding: e.encoding,
    batchSize: e.batchSize,
    timeoutMs: e.timeoutMs,
    maxRetries: e.maxRetries,
    retryMaxWaitMs: e.retryMaxWaitMs,
    ...deps,
  });
}
