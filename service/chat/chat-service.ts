import type { ContentService } from '../content/content-service';
import type { ItemType } from '../content/item';
import type { RequestStats } from '../metrics/request-stats';
import type { Analyzer } from '../search/analyzer';
import type { SearchIndex } from '../search/search-index';
import { passageFor } from './passages';
import { buildMessages } from './prompt';
import { countedUsage } from './tokens';
import type { ChatMessage, ChatProvider, CompletionChunk, CompletionRequest, Passage, Usage } from './types';

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
}

/** The body of `POST /api/chat`. */
export interface ChatAnswer {
  readonly answer: string;
  readonly sources: readonly ChatSource[];
  readonly usage: Usage;
  readonly model: string;
}

/** A streamed answer whose first chunk has arrived (so failures before it were thrown). */
export interface ChatStream {
  readonly sources: readonly ChatSource[];
  /** Deltas, then one `done` whose usage is always filled in. */
  readonly chunks: AsyncGenerator<CompletionChunk & ({ kind: 'delta' } | { kind: 'done'; usage: Usage })>;
}

/** Options of `ChatService`. */
export interface ChatServiceOptions {
  readonly provider: ChatProvider;
  readonly index: SearchIndex;
  readonly content: ContentService;
  readonly stats: RequestStats;
  readonly analyzer: Analyzer;
  /** Passages retrieved per answer (`CHAT_CONTEXT_DOCUMENTS`). */
  readonly contextDocuments: number;
  readonly maxTokens: number;
  readonly temperature: number;
}

/**
 * Retrieval-augmented answers: search the index with the question, give the best passages to
 * the provider, return its answer with the sources it may cite. Tokens come from the provider's
 * `usage` when it reports one, else from the tokenizer, and are added to the tokens counter.
 */
export class ChatService {
  constructor(private readonly opts: ChatServiceOptions) {}

  get providerName(): string {
    return this.opts.provider.name;
  }

  private async prepare(input: ChatInput, signal?: AbortSignal): Promise<{ req: CompletionRequest; sources: ChatSource[] }> {
    const page = await this.opts.index.search({ text: input.message, limit: this.opts.contextDocuments, offset: 0, snippets: false });
    const sources: ChatSource[] = [];
    const passages: Passage[] = [];
    for (const h of page.hits) {
      const item = this.opts.content.get(h.id);
      if (!item) continue;
      sources.push({ id: item.id, type: item.type, title: item.title, url: item.url ?? null });
      passages.push(passageFor(item, input.message, this.opts.analyzer));
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

  async answer(input: ChatInput, signal?: AbortSignal): Promise<ChatAnswer> {
    const { req, sources } = await this.prepare(input, signal);
    const done = await this.opts.provider.complete(req);
    const usage = done.usage ?? countedUsage(req.messages, done.text);
    this.opts.stats.addTokens(usage.total_tokens);
    return { answer: done.text, sources, usage, model: done.model };
  }

  async stream(input: ChatInput, signal?: AbortSignal): Promise<ChatStream> {
    const { req, sources } = await this.prepare(input, signal);
    const it = this.opts.provider.stream(req)[Symbol.asyncIterator]();
    const first = await it.next();
    const stats = this.opts.stats;
    async function* chunks(): ChatStream['chunks'] {
      let text = '';
      let next = first;
      try {
        while (!next.done) {
          const c = next.value;
          if (c.kind === 'delta') {
            text += c.text;
            yield c;
          } else {
            const usage = c.usage ?? countedUsage(req.messages, text);
            stats.addTokens(usage.total_tokens);
            yield { kind: 'done', usage, model: c.model };
            return;
          }
          next = await it.next();
        }
      } finally {
        await it.return?.();
      }
    }
    return { sources, chunks: chunks() };
  }
}
