import type { Logger } from 'pino';
import { parseRetryAfter } from '../lib/retry-after';
import { parseSse, SseEventTooLarge, type SseEvent } from './sse';
import { reportedUsage } from './tokens';
import {
  ProviderError,
  type ChatProvider,
  type Completion,
  type CompletionChunk,
  type CompletionRequest,
  type Usage,
} from './types';

/** Options of `OpenAiProvider`. */
export interface OpenAiOptions {
  /** API base, e.g. `https://api.openai.com/v1` (`AI_BASE_URL`); `/chat/completions` is appended. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer`; local servers often need none (`AI_API_KEY`). */
  readonly apiKey?: string;
  readonly model: string;
  /** Per attempt: until the whole answer (non-streaming) or between two events (streaming). */
  readonly timeoutMs: number;
  /**
   * Longest wait for a streamed answer's first event, retries included (`AI_FIRST_BYTE_TIMEOUT_MS`):
   * the client's headers wait for it. @default 30000
   */
  readonly firstByteTimeoutMs?: number;
  /** Most bytes of one streamed event, or of a whole JSON answer (`AI_EVENT_MAX_BYTES`). @default 1 MiB */
  readonly maxEventBytes?: number;
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
  choices?: Array<{
    message?: { content?: string | null };
    delta?: { content?: string | null };
    finish_reason?: string | null;
  }>;
  usage?: unknown;
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
 * is retried only until its first event. Failures end as `ProviderError` (`timeout` → 504,
 * `upstream` → 502).
 *
 * Bounded whatever the provider sends (issue 37): a streamed answer's first event must come within
 * `firstByteTimeoutMs` (retries included), one event or a whole JSON answer may hold at most
 * `maxEventBytes`, and the request's `deadline` ends the answer wherever it is. The body is read
 * only as fast as the caller takes chunks, so a caller that waits (a slow client) holds the
 * provider's connection back instead of buffering it. A client going away (`req.signal`) stops
 * new attempts, not the one under way: its answer is read to the end so its usage is counted.
 * Usage that is not a count (negative, fractional) is refused with a warning: the caller estimates.
 */
export class OpenAiProvider implements ChatProvider {
  readonly name = 'openai';
  readonly model: string;
  private readonly url: string;
  private readonly fetchFn: typeof fetch;
  private readonly maxEventBytes: number;
  private readonly firstByteMs: number;

  constructor(private readonly opts: OpenAiOptions) {
    this.model = opts.model;
    this.url = `${opts.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.fetchFn = opts.fetch ?? fetch;
    this.maxEventBytes = opts.maxEventBytes ?? 1024 * 1024;
    this.firstByteMs = opts.firstByteTimeoutMs ?? 30_000;
  }

  /** The provider's usage when it is a count; a record that is not is logged and left out. */
  private usageOf(raw: unknown): Usage | undefined {
    const { usage, problem } = reportedUsage(raw);
    if (problem)
      this.opts.logger.warn(
        { problem },
        'the AI provider reported usage that is not a count; the service estimates the tokens instead',
      );
    return usage;
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
   * Runs `attempt` with retries. `attempt` gets a signal that fires on its timeout or when `halt`
   * (the request's deadline, and `stop`) fires, a function that restarts the timeout (streams
   * call it per event), and one that ends it. The client going away (`req.signal`) stops the
   * retries, not the attempt under way. When `halt` fires, its reason (a `ProviderError`) is thrown.
   */
  private async withRetries<T>(
    req: CompletionRequest,
    attempt: (signal: AbortSignal, touch: () => void, done: () => void) => Promise<T>,
    stop?: AbortSignal,
  ): Promise<T> {
    const base = this.opts.backoffBaseMs ?? 500;
    const max = this.opts.backoffMaxMs ?? 20_000;
    const halts = [req.deadline, stop].filter((s): s is AbortSignal => s !== undefined);
    const halt = halts.length ? AbortSignal.any(halts) : undefined;
    let last: AttemptError | undefined;
    for (let n = 0; n <= this.opts.maxRetries; n++) {
      if (n > 0) {
        const backoff = Math.min(max, base * 2 ** (n - 1)) * (0.8 + Math.random() * 0.4);
        const wait = Math.min(max, Math.max(backoff, last?.retryAfterMs ?? 0));
        this.opts.logger.warn(
          { attempt: n + 1, waitMs: Math.round(wait), reason: last?.message },
          'AI provider call failed; retrying',
        );
        const waitStops = [halt, req.signal].filter((s): s is AbortSignal => s !== undefined);
        try {
          await sleep(wait, waitStops.length ? AbortSignal.any(waitStops) : undefined);
        } catch {
          if (halt?.aborted) throw halt.reason as ProviderError;
        }
      }
      if (halt?.aborted) throw halt.reason as ProviderError;
      if (req.signal?.aborted) throw new ProviderError('upstream', 'the client went away');
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
      const signal = halt ? AbortSignal.any([ctrl.signal, halt]) : ctrl.signal;
      touch();
      try {
        return await attempt(signal, touch, done);
      } catch (e) {
        done();
        if (e instanceof ProviderError) throw e;
        if (halt?.aborted) throw halt.reason as ProviderError;
        if (e instanceof SseEventTooLarge) throw this.eventTooLarge();
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
    if (last?.kind === 'timeout')
      throw new ProviderError('timeout', `the AI provider did not answer in time (${last.message}; ${attempts})`);
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

  private eventTooLarge(answerText?: string): ProviderError {
    return new ProviderError(
      'upstream',
      `the AI provider sent an event larger than ${this.maxEventBytes} bytes (AI_EVENT_MAX_BYTES)`,
      undefined,
      {
        limit: 'AI_EVENT_MAX_BYTES',
        ...(answerText === undefined ? {} : { answerText }),
      },
    );
  }

  /**
   * The body of a JSON answer, at most `maxEventBytes`. Past the limit, or when the deadline ends
   * the read, a `ProviderError` carrying the text read so far (the answer had begun); any other
   * failure is thrown as it is (an attempt that may be retried).
   */
  private async readAnswer(res: Response, deadline: AbortSignal | undefined): Promise<string> {
    const parts: Uint8Array[] = [];
    let bytes = 0;
    const sofar = () => new TextDecoder().decode(Buffer.concat(parts));
    if (!res.body) return '';
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.length;
        if (bytes > this.maxEventBytes) throw this.eventTooLarge(sofar());
        parts.push(value);
      }
    } catch (e) {
      await reader.cancel().catch(() => undefined);
      if (e instanceof ProviderError) throw e;
      if (deadline?.aborted) {
        const r = deadline.reason as ProviderError;
        throw new ProviderError(r.kind, r.message, undefined, {
          ...(r.limit ? { limit: r.limit } : {}),
          answerText: sofar(),
        });
      }
      throw e;
    }
    return sofar();
  }

  async complete(req: CompletionRequest): Promise<Completion> {
    return this.withRetries(req, async (signal, _touch, done) => {
      const res = await this.post(req, false, signal);
      const text = await this.readAnswer(res, req.deadline);
      done();
      let body: ChatCompletionBody;
      try {
        body = JSON.parse(text) as ChatCompletionBody;
      } catch {
        throw new ProviderError(
          'upstream',
          `the AI provider failed: the answer is not JSON: ${errorText(text)}`,
          undefined,
          { answerText: text },
        );
      }
      const content = body.choices?.[0]?.message?.content;
      if (typeof content !== 'string') {
        throw new ProviderError(
          'upstream',
          'the AI provider failed: the answer has no choices[0].message.content',
          undefined,
          { answerText: text },
        );
      }
      return { text: content, usage: this.usageOf(body.usage), model: body.model ?? this.model };
    });
  }

  async *stream(req: CompletionRequest): AsyncIterable<CompletionChunk> {
    let events: AsyncGenerator<SseEvent> | undefined;
    let touchFn: () => void = () => undefined;
    let doneFn: () => void = () => undefined;
    let streamSignal: AbortSignal | undefined;
    const firstByte = new AbortController();
    const firstByteTimer = setTimeout(() => {
      const message = `the AI provider sent nothing within ${this.firstByteMs} ms (AI_FIRST_BYTE_TIMEOUT_MS)`;
      firstByte.abort(new ProviderError('timeout', message, undefined, { limit: 'AI_FIRST_BYTE_TIMEOUT_MS' }));
    }, this.firstByteMs);
    // Retries cover everything up to the first event (or the end).
    let first: IteratorResult<SseEvent>;
    try {
      first = await this.withRetries(
        req,
        async (signal, touch, done) => {
          const res = await this.post(req, true, signal);
          if (!res.body) throw new AttemptError('upstream', 'the answer has no body', true);
          touch();
          const it = parseSse(res.body as unknown as AsyncIterable<Uint8Array>, { maxEventBytes: this.maxEventBytes });
          let head: IteratorResult<SseEvent>;
          try {
            head = await it.next();
          } catch (e) {
            await it.return(undefined).catch(() => undefined);
            throw e;
          }
          touchFn = touch;
          doneFn = done;
          streamSignal = signal;
          events = it;
          return head;
        },
        firstByte.signal,
      );
    } finally {
      clearTimeout(firstByteTimer);
    }
    // The silence timer runs only while the provider is waited for, never while the caller holds
    // a chunk (a slow client's backpressure is not the provider's silence).
    doneFn();
    yield { kind: 'start' };
    let model = this.model;
    let usage: Usage | undefined;
    // A stream is complete with `[DONE]` or a finish_reason; ending before either is a failure.
    let finished = false;
    try {
      if (req.deadline?.aborted) throw req.deadline.reason as ProviderError;
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
        if (chunk.usage !== undefined && chunk.usage !== null) usage = this.usageOf(chunk.usage) ?? usage;
        const delta = chunk.choices?.[0]?.delta?.content;
        if (typeof delta === 'string' && delta) yield { kind: 'delta', text: delta };
        if (chunk.choices?.[0]?.finish_reason) finished = true;
        touchFn();
        next = await events!.next();
        doneFn();
      }
      if (!finished) throw new ProviderError('upstream', 'the AI provider stream ended before the answer was complete');
    } catch (e) {
      if (e instanceof ProviderError) throw e;
      if (req.deadline?.aborted) throw req.deadline.reason as ProviderError;
      if (e instanceof SseEventTooLarge) throw this.eventTooLarge();
      if (streamSignal?.aborted)
        throw new ProviderError('timeout', `the AI provider stopped sending for ${this.opts.timeoutMs} ms mid-answer`);
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
