import type { EmbeddingErrorReason } from '../../contract';

/** Tokens the provider reported for one call (OpenAI's `usage` of an embeddings answer). */
export interface EmbeddingUsage {
  readonly prompt_tokens: number;
  readonly total_tokens: number;
}

/** The vectors of some texts, in their order, and the tokens they cost. */
export interface Embeddings {
  /** One vector a text, each of the embedder's `dimensions`, every number finite. */
  readonly vectors: readonly Float32Array[];
  /** Tokens reported by the provider, summed over the calls; 0 where it reported none. */
  readonly usage: EmbeddingUsage;
}

/** Options of one `embed` call. */
export interface EmbedOptions {
  /** Ends the call (and its retries) when aborted; its reason is thrown. */
  readonly signal?: AbortSignal;
  /** Retries of each provider call, for a caller that cannot wait (a query). @default the embedder's */
  readonly maxRetries?: number;
}

/** Turns texts into vectors. */
export interface Embedder {
  /** The model asked for. */
  readonly model: string;
  /** Length of every vector it returns. */
  readonly dimensions: number;
  /** The vectors of `texts` (none empty), in order; rejects with `EmbeddingError` when the provider fails. */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Embeddings>;
}

/** Where the tokens the provider reports go (`svc_ai_search_total_tokens_used`: `RequestStats.addTokens`). */
export interface TokenCounter {
  addTokens(n: number, opts?: { estimated?: boolean }): void;
}

/** Told of every provider call as it ends (the embedding metrics). */
export interface EmbeddingCallObserver {
  /** One call (attempt) took `seconds`; `failure` is why it failed, absent when it succeeded. */
  call(seconds: number, failure?: EmbeddingErrorReason): void;
}

/** An embeddings call that failed for good, retries spent (or not worth it). */
export class EmbeddingError extends Error {
  constructor(
    /** Why the last attempt failed. */
    readonly reason: EmbeddingErrorReason,
    message: string,
    readonly details: {
      /** The provider's HTTP status, when there was one. */
      readonly status?: number;
      /** The wait the provider asked for (`Retry-After`), when it was longer than the embedder waits. */
      readonly retryAfterMs?: number;
      /** Attempts made. */
      readonly attempts?: number;
      /** Vectors of the leading texts, embedded by the batches before the one that failed. */
      readonly partial?: readonly Float32Array[];
    } = {},
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }
}
