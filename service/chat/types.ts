/** A message of a chat conversation (OpenAI's roles). */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** Token counts of one answer, OpenAI's field names. */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** A retrieved passage the answer may cite as `[n]` (n = position + 1). */
export interface Passage {
  readonly id: string;
  readonly title: string;
  /** Plain text, already cut to the part that matches the question best. */
  readonly text: string;
}

/** What a provider is asked. */
export interface CompletionRequest {
  /** The full prompt (system prompt with the passages, history, question). */
  readonly messages: readonly ChatMessage[];
  /** The question alone, and the passages, for providers that work on them directly. */
  readonly question: string;
  readonly passages: readonly Passage[];
  readonly maxTokens: number;
  readonly temperature: number;
  /** Aborted when the client goes away. */
  readonly signal?: AbortSignal;
}

/** A whole answer. */
export interface Completion {
  readonly text: string;
  /** The provider's own count, when it gave one. */
  readonly usage?: Usage;
  readonly model: string;
}

/** A piece of a streamed answer: text deltas, then one `done` (with the provider's usage, if any). */
export type CompletionChunk =
  | { readonly kind: 'delta'; readonly text: string }
  | { readonly kind: 'done'; readonly usage?: Usage; readonly model: string };

/** An answer engine. */
export interface ChatProvider {
  /** `extractive` or `openai`. */
  readonly name: string;
  /** Model reported in responses. */
  readonly model: string;
  complete(req: CompletionRequest): Promise<Completion>;
  /** Deltas in order, then one `done`. Errors before the first chunk reject the first `next()`. */
  stream(req: CompletionRequest): AsyncIterable<CompletionChunk>;
}

/** The provider failed: `timeout` → 504, anything else → 502. */
export class ProviderError extends Error {
  constructor(
    readonly kind: 'timeout' | 'upstream',
    message: string,
    /** The upstream HTTP status, when there was one. */
    readonly upstreamStatus?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}
