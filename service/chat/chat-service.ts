import type { ContentService } from '../content/content-service';
import type { ItemType } from '../content/item';
import type { ItemFilter } from '../content/item-filter';
import type { Analyzer } from '../search/analysis/analyzer';
import type { SearchIndex } from '../search/search-index';
import { PASSAGE_CHARS } from '../content/sentences';
import { passageFor } from './passages';
import { buildMessages } from './prompt';
import { AnswerText, estimatedUsage } from './tokens';
import {
  ProviderError,
  type ChatMessage,
  type ChatProvider,
  type CompletionChunk,
  type CompletionRequest,
  type Passage,
  type Usage,
} from './types';

/** A cited source of an answer; `[n]` in the answer is `sources[n-1]`. */
export interface ChatSource {
  readonly id: string;
  readonly type: ItemType;
  readonly title: string;
  readonly url: string | null;
}

/** A validated chat request. */
export interface ChatInput {
  readonly message: string;
  readonly history: readonly ChatMessage[];
  /** Only items it keeps are retrieved (search's filters). */
  readonly filter?: ItemFilter;
}

/** The body of `POST /api/chat`. */
export interface ChatAnswer {
  readonly answer: string;
  readonly sources: readonly ChatSource[];
  readonly usage: Usage;
  readonly model: string;
}

/** A streamed answer that has begun (the provider's first event arrived; failures before it were thrown). */
export interface ChatStream {
  readonly sources: readonly ChatSource[];
  /**
   * Deltas, then one `done` whose usage is always filled in; or a `ProviderError` thrown when
   * the provider fails or the answer goes past a limit. Take it to the end even when the client
   * has gone: that is how the tokens of the answer get counted. Returning early counts them too.
   */
  readonly chunks: AsyncGenerator<
    Extract<CompletionChunk, { kind: 'delta' }> | { kind: 'done'; usage: Usage; model: string }
  >;
  /**
   * Aborted when the answer's time is up (`AI_ANSWER_TIMEOUT_MS`): a caller waiting for its
   * client (backpressure) stops waiting, and the next chunk throws the timeout.
   */
  readonly deadline: AbortSignal;
}

/** Bounds of one answer, whatever the provider sends (issue 37). */
export interface AnswerLimits {
  /** Longest answer, characters (UTF-16 code units) (`AI_ANSWER_MAX_CHARS`). */
  readonly maxChars: number;
  /** Longest time of an answer, from the call to the provider to its last chunk, retries and slow clients included (`AI_ANSWER_TIMEOUT_MS`). */
  readonly totalMs: number;
}

/** Where the tokens of answers are counted. */
export interface TokenCounter {
  /** Adds tokens; `estimated` when the service counted them because the provider reported none. */
  addTokens(n: number, opts?: { estimated?: boolean }): void;
}

/** Options of `ChatService`. */
export interface ChatServiceOptions {
  readonly provider: ChatProvider;
  readonly index: SearchIndex;
  readonly content: ContentService;
  /** Where tokens are counted (the service's `RequestStats`). */
  readonly stats: TokenCounter;
  readonly analyzer: Analyzer;
  /** Passages retrieved per answer (`CHAT_CONTEXT_DOCUMENTS`). */
  readonly contextDocuments: number;
  /**
   * The items an answer draws on, best first (issue 41: the search service's hybrid retrieval
   * when items have vectors). @default the index's keyword search
   */
  readonly retrieve?: (text: string, filter: ItemFilter | undefined, limit: number) => Promise<readonly string[]>;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly limits: AnswerLimits;
}

/** The deadline of one answer: a signal aborted with a `ProviderError` after `ms`, and a way to drop its timer. */
function answerDeadline(ms: number): { signal: AbortSignal; clear: () => void } {
  const ctrl = new AbortController();
  const timer = setTimeout(() => {
    ctrl.abort(
      new ProviderError('timeout', `the answer took longer than ${ms} ms (AI_ANSWER_TIMEOUT_MS)`, undefined, {
        limit: 'AI_ANSWER_TIMEOUT_MS',
      }),
    );
  }, ms);
  return { signal: ctrl.signal, clear: () => clearTimeout(timer) };
}

/** The error of an answer longer than `max` characters. */
function tooLong(max: number): ProviderError {
  return new ProviderError(
    'upstream',
    `the answer is longer than ${max} characters (AI_ANSWER_MAX_CHARS): the AI provider did not stop at max_tokens`,
    undefined,
    {
      limit: 'AI_ANSWER_MAX_CHARS',
    },
  );
}

/** `text` cut to at most `n` characters, never between the halves of a surrogate pair. */
function headOf(text: string, n: number): string {
  if (n <= 0) return '';
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/**
 * Retrieval-augmented answers: search the index with the question, give the best passages to
 * the provider, return its answer with the sources it may cite.
 *
 * Every answer is bounded by `limits` (its length and its total time), whatever the provider
 * sends. The tokens of every answer the provider began are counted, however it ends (done, a
 * provider failure, a limit, the client gone): the provider's `usage` when it reported one,
 * else an estimate with the tokenizer over the prompt and the answer received, counted as such.
 */
export class ChatService {
  constructor(private readonly opts: ChatServiceOptions) {}

  get providerName(): string {
    return this.opts.provider.name;
  }

  private async prepare(
    input: ChatInput,
    signal?: AbortSignal,
  ): Promise<{ req: CompletionRequest; sources: ChatSource[] }> {
    const ids = this.opts.retrieve
      ? await this.opts.retrieve(input.message, input.filter, this.opts.contextDocuments)
      : (
          await this.opts.index.search({
            text: input.message,
            ...(input.filter ? { filter: input.filter } : {}),
            limit: this.opts.contextDocuments,
            offset: 0,
            snippets: false,
          })
        ).hits.map((h) => h.id);
    const sources: ChatSource[] = [];
    const passages: Passage[] = [];
    // A source found by a synonym gives the passage that holds the synonym.
    const synonyms = ids.length ? (this.opts.index.synonymTerms?.(input.message) ?? []) : [];
    for (const id of ids) {
      const item = this.opts.content.get(id);
      if (!item) continue;
      sources.push({ id: item.id, type: item.type, title: item.title, url: item.url ?? null });
      passages.push(passageFor(item, input.message, this.opts.analyzer, PASSAGE_CHARS, synonyms));
    }
    const messages = buildMessages(input.message, input.history, passages);
    return {
      sources,
      req: {
        messages,
        question: input.message,
        passages,
        maxTokens: this.opts.maxTokens,
        temperature: this.opts.temperature,
        ...(signal ? { signal } : {}),
      },
    };
  }

  /** Counts the tokens of an answer: the provider's usage, else an estimate (counted as one). */
  private count(messages: readonly ChatMessage[], answer: AnswerText, reported: Usage | undefined): Usage {
    if (reported) {
      this.opts.stats.addTokens(reported.total_tokens);
      return reported;
    }
    const usage = estimatedUsage(messages, answer);
    this.opts.stats.addTokens(usage.total_tokens, { estimated: true });
    return usage;
  }

  async answer(input: ChatInput, signal?: AbortSignal): Promise<ChatAnswer> {
    const { req: base, sources } = await this.prepare(input, signal);
    const deadline = answerDeadline(this.opts.limits.totalMs);
    const req = { ...base, deadline: deadline.signal };
    try {
      const done = await this.opts.provider.complete(req);
      const text = new AnswerText();
      text.add(done.text);
      const usage = this.count(req.messages, text, done.usage);
      if (done.text.length > this.opts.limits.maxChars) throw tooLong(this.opts.limits.maxChars);
      return { answer: done.text, sources, usage, model: done.model };
    } catch (e) {
      if (e instanceof ProviderError && e.answerText !== undefined) {
        const text = new AnswerText();
        text.add(e.answerText);
        this.count(req.messages, text, undefined);
      }
      throw e;
    } finally {
      deadline.clear();
    }
  }

  async stream(input: ChatInput, signal?: AbortSignal): Promise<ChatStream> {
    const { req: base, sources } = await this.prepare(input, signal);
    const deadline = answerDeadline(this.opts.limits.totalMs);
    const req = { ...base, deadline: deadline.signal };
    const it = this.opts.provider.stream(req)[Symbol.asyncIterator]();
    let first: IteratorResult<CompletionChunk>;
    try {
      first = await it.next();
    } catch (e) {
      deadline.clear();
      throw e;
    }
    const max = this.opts.limits.maxChars;
    const count = (answer: AnswerText, reported: Usage | undefined) => this.count(req.messages, answer, reported);
    async function* chunks(): ChatStream['chunks'] {
      const text = new AnswerText();
      let counted = false;
      let next = first;
      try {
        while (!next.done) {
          // A provider that ignores the deadline (the extractive one) is held to it here.
          if (deadline.signal.aborted) throw deadline.signal.reason as ProviderError;
          const c = next.value;
          if (c.kind === 'delta') {
            if (text.chars + c.text.length > max) {
              const head = headOf(c.text, max - text.chars);
              text.add(head);
              if (head) yield { kind: 'delta', text: head };
              throw tooLong(max);
            }
            text.add(c.text);
            yield c;
          } else if (c.kind === 'done') {
            counted = true;
            yield { kind: 'done', usage: count(text, c.usage), model: c.model };
            return;
          }
          next = await it.next();
        }
      } finally {
        deadline.clear();
        // Ended any other way (a failure, a limit, the caller stopping): the provider's answer
        // had begun, so its tokens are spent; no usage arrived, so they are estimated.
        if (!counted) count(text, undefined);
        await it.return?.();
      }
    }
    return { sources, chunks: chunks(), deadline: deadline.signal };
  }
}
