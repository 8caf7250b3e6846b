import type { Logger } from 'pino';
import { parseSse, type SseEvent } from './sse';
import { ProviderError, type ChatProvider, type Completion, type CompletionChunk, type CompletionRequest, type Usage } from './types';

/** Options of `OpenAiProvider`. */
export interface OpenAiOptions {
  /** API base, e.g. `https://api.openai.com/v1` (`AI_BASE_URL`); `/chat/completions` is appended. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer`; local servers often need none (`AI_API_KEY`). */
  readonly apiKey?: string;
  readonly model: string;
  /** Per attempt: until the whole answer (non-streaming) or between two chunks (streaming). */
  readonly timeoutMs: number;
  /** Retries after the first attempt (429, 5xx, network errors, timeouts). */
  readonly maxRetries: number;
  readonly logger: Logger;
  /** First backoff, doubled on each retry, with ±20% jitter. @default 500 */
  readonly backoffBaseMs?: number;
  /** Longest wait between attempts, Retry-After included. @default 20000 */
  readonly backoffMaxMs?: number;
  /** For tests. @default global fetch */
  readonly fetch?: typeof fetch;
}

const RETRY_STATUS = new Set([408, 409, 429, 500, 502, 503, 504]);

interface ChatCompletionBody {
  model?: string;
  choices?: Array<{ message?: { content?: string | null }; delta?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: Partial<Usage> | null;
  error?: { message?: string } | string;
}

/** A failed attempt: retried unless `final`. */
class AttemptError extends Error {
  constructor(
    readonly kind: 'timeout' | 'upstream',
    message: string,
    readonly retry: boolean,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

function parseRetryAfter(v: string | null, now: number): number | undefined {
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function usageOf(u: Partial<Usage> | null | undefined): Usage | undefined {
  if (!u || typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return undefined;
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: typeof u.total_tokens === 'number' ? u.total_tokens : u.prompt_tokens + u.completion_tokens,
  };
}

function errorText(body: string): string {
  try {
    const j = JSON.parse(body) as ChatCompletionBody;
    const msg = typeof j.error === 'string' ? j.error : j.error?.message;
    if (msg) return msg.slice(0, 300);
  } catch {
    // not JSON: quote the text
  }
  return body.replace(/\s+/g, ' ').trim().slice(0, 300) || '(empty body)';
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A client of the OpenAI-compatible chat-completions protocol (OpenAI, Azure-style gateways,
 * vLLM, Ollama, llama.cpp, LiteLLM…): `POST {baseUrl}/chat/completions`, JSON or SSE streaming
 * with `stream_options.include_usage`. Each attempt has its own timeout; 429, 5xx, network errors
 * and timeouts are retried with exponential backoff (honouring `Retry-After`); a streamed answer
 * is retried only until its first chunk. Failures end as `ProviderError` (`timeout` → 504,
 * `upstream` → 502).
 */
export class OpenAiProvider implements ChatProvider {
  readonly name = 'openai';
  readonly model: string;
  private readonly url: string;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly opts: OpenAiOptions) {
    this.model = opts.model;
    this.url = `${opts.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.fetchFn = opts.fetch ?? fetch;
  }

  private body(req: CompletionRequest, stream: boolean): string {
    return JSON.stringify({
      model: this.opts.model,
      messages: req.messages,
      max_tokens: req.maxTokens,
      temperature: req.temperature,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
  }

  /**
   * Runs `attempt` with retries. `attempt` gets a signal that fires on its timeout or on the
   * client going away, and a function that restarts the timeout (streams call it per chunk).
   */
  private async withRetries<T>(
    req: CompletionRequest,
    attempt: (signal: AbortSignal, touch: () => void, done: () => void) => Promise<T>,
  ): Promise<T> {
    const base = this.opts.backoffBaseMs ?? 500;
    const max = this.opts.backoffMaxMs ?? 20_000;
    let last: AttemptError | undefined;
    for (let n = 0; n <= this.opts.maxRetries; n++) {
      if (n > 0) {
        const backoff = Math.min(max, base * 2 ** (n - 1)) * (0.8 + Math.random() * 0.4);
        const wait = Math.min(max, Math.max(backoff, last?.retryAfterMs ?? 0));
        this.opts.logger.warn({ attempt: n + 1, waitMs: Math.round(wait), reason: last?.message }, 'AI provider call failed; retrying');
        try {
          await sleep(wait, req.signal);
        } catch {
          throw new ProviderError('upstream', 'the client went away');
        }
      }
      const ctrl = new AbortController();
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      const touch = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          timedOut = true;
          ctrl.abort(new Error('timeout'));
        }, this.opts.timeoutMs);
      };
      const done = () => clearTimeout(timer);
      const signal = req.signal ? AbortSignal.any([ctrl.signal, req.signal]) : ctrl.signal;
      touch();
      try {
        return await attempt(signal, touch, done);
      } catch (e) {
        done();
        if (req.signal?.aborted) throw new ProviderError('upstream', 'the client went away');
        if (e instanceof ProviderError) throw e;
        last =
          e instanceof AttemptError
            ? e
            : timedOut
              ? new AttemptError('timeout', `no answer within ${this.opts.timeoutMs} ms`, true)
              : new AttemptError('upstream', `could not reach ${this.url}: ${(e as Error).message}${causeOf(e)}`, true);
        if (!last.retry) break;
      }
    }
    const attempts = `${this.opts.maxRetries + 1} attempt${this.opts.maxRetries ? 's' : ''}`;
    if (last?.kind === 'timeout') throw new ProviderError('timeout', `the AI provider did not answer in time (${last.message}; ${attempts})`);
    throw new ProviderError(
      'upstream',
      `the AI provider failed: ${last?.message ?? 'unknown error'}${last?.retry ? ` (${attempts})` : ''}`,
      last?.status,
    );
  }

  /** Sends the request; a non-2xx answer becomes an AttemptError. */
  private async post(req: CompletionRequest, stream: boolean, signal: AbortSignal): Promise<Response> {
    const res = await this.fetchFn(this.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
        ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
      },
      body: this.body(req, stream),
      signal,
    });
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw new AttemptError(
        'upstream',
        `HTTP ${res.status}: ${errorText(text)}`,
        RETRY_STATUS.has(res.status),
        res.status,
        parseRetryAfter(res.headers.get('retry-after'), Date.now()),
      );
    }
    return res;
  }

  async complete(req: CompletionRequest): Promise<Completion> {
    return this.withRetries(req, async (signal, _touch, done) => {
      const res = await this.post(req, false, signal);
      const text = await res.text();
      done();
      let body: ChatCompletionBody;
      try {
        body = JSON.parse(text) as ChatCompletionBody;
      } catch {
        throw new AttemptError('upstream', `the answer is not JSON: ${errorText(text)}`, false);
      }
      const content = body.choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new AttemptError('upstream', 'the answer has no choices[0].message.content', false);
      return { text: content, usage: usageOf(body.usage), model: body.model ?? this.model };
    });
  }

  async *stream(req: CompletionRequest): AsyncIterable<CompletionChunk> {
    let events: AsyncGenerator<SseEvent> | undefined;
    let touchFn: () => void = () => undefined;
    let doneFn: () => void = () => undefined;
    let streamSignal: AbortSignal | undefined;
    // Retries cover everything up to the first chunk with content (or the end).
    const first = await this.withRetries(req, async (signal, touch, done) => {
      const res = await this.post(req, true, signal);
      if (!res.body) throw new AttemptError('upstream', 'the answer has no body', true);
      touch();
      const it = parseSse(res.body as unknown as AsyncIterable<Uint8Array>);
      const head = await it.next();
      touchFn = touch;
      doneFn = done;
      streamSignal = signal;
      events = it;
      return head;
    });
    let model = this.model;
    let usage: Usage | undefined;
    // A stream is complete with `[DONE]` or a finish_reason; ending before either is a failure.
    let finished = false;
    try {
      let next = first;
      while (!next.done) {
        const data = next.value.data.trim();
        if (data === '[DONE]') {
          finished = true;
          break;
        }
        let chunk: ChatCompletionBody;
        try {
          chunk = JSON.parse(data) as ChatCompletionBody;
        } catch {
          throw new ProviderError('upstream', `the AI provider sent a chunk that is not JSON: ${data.slice(0, 100)}`);
        }
        if (chunk.error) throw new ProviderError('upstream', `the AI provider failed mid-answer: ${errorText(data)}`);
        if (chunk.model) model = chunk.model;
        usage = usageOf(chunk.usage) ?? usage;
        const delta = chunk.choices?.[0]?.delta?.content;
        if (typeof delta === 'string' && delta) yield { kind: 'delta', text: delta };
        if (chunk.choices?.[0]?.finish_reason) finished = true;
        touchFn();
        next = await events!.next();
      }
      if (!finished) throw new ProviderError('upstream', 'the AI provider stream ended before the answer was complete');
    } catch (e) {
      if (e instanceof ProviderError) throw e;
      if (req.signal?.aborted) throw new ProviderError('upstream', 'the client went away');
      if (streamSignal?.aborted) throw new ProviderError('timeout', `the AI provider stopped sending for ${this.opts.timeoutMs} ms mid-answer`);
      throw new ProviderError('upstream', `the AI provider stream broke off: ${(e as Error).message}`);
    } finally {
      doneFn();
      await events?.return(undefined);
    }
    yield { kind: 'done', usage, model };
  }
}

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause ? ` (${cause.code ?? cause.message ?? ''})` : '';
}
