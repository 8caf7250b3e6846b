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
  /**
   * Aborted when the client goes away. An answer the provider has begun is still read to its end
   * (within the limits) so its tokens are counted; only new attempts stop.
   */
  readonly signal?: AbortSignal;
  /** Aborted, with a `ProviderError` as its reason, when the answer's time is up (`AI_ANSWER_TIMEOUT_MS`). */
  readonly deadline?: AbortSignal;
}

/** A whole answer. */
export interface Completion {
  readonly text: string;
  /** The provider's own count, when it gave one. */
  readonly usage?: Usage;
  readonly model: string;
}

/**
 * A piece of a streamed answer: optionally one `start` (the provider's answer has begun: its
 * first event arrived), text deltas, then one `done` (with the provider's usage, if any).
 */
export type CompletionChunk =
  | { readonly kind: 'start' }
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

/** The settings whose limits can end an answer (issue 37), named as the variables are. */
export type AnswerLimitName =
  'AI_ANSWER_MAX_CHARS' | 'AI_ANSWER_TIMEOUT_MS' | 'AI_FIRST_BYTE_TIMEOUT_MS' | 'AI_EVENT_MAX_BYTES';

/** More about a `ProviderError`. */
export interface ProviderErrorDetails {
  /** The limit the answer went past, when that is why it ended. */
  readonly limit?: AnswerLimitName;
  /**
   * Set when the provider had begun an answer (a 200 whose body then failed or went past a
   * limit): what of it was read, at most `AI_EVENT_MAX_BYTES`, for the token estimate.
   */
  readonly answerText?: string;
}

/** The provider failed: `timeout` → 504, anything else → 502. */
export class ProviderError extends Error {
  readonly limit?: AnswerLimitName;
  readonly answerText?: string;

  constructor(
    readonly kind: 'timeout' | 'upstream',
    message: string,
    /** The upstream HTTP status, when there was one. */
    readonly upstreamStatus?: number,
    details: ProviderErrorDetails = {},
  ) {
    super(message);
    this.name = 'ProviderError';
    if (details.limit) this.limit = details.limit;
    if (details.answerText !== undefined) this.answerText = details.answerText;
  }
}
