import type { Logger } from 'pino';
import type { EmbeddingsEncoding } from '../../configs';
import type { EmbeddingErrorReason } from '../../contract';
import { systemClock, type Clock } from '../lib/clock';
import { parseRetryAfter } from '../lib/retry-after';
import { InvalidAnswer, parseEmbeddingAnswer, type EmbeddingAnswer } from './embedding-answer';
import {
  EmbeddingError,
  type EmbedOptions,
  type Embedder,
  type EmbeddingCallObserver,
  type Embeddings,
  type EmbeddingUsage,
  type TokenCounter,
} from './types';

/** Bytes one number of an answer may take: the longest double JSON writes, its comma and an indented line. */
export const ANSWER_BYTES_PER_NUMBER = 32;
/** Bytes of an answer beyond its numbers: the envelope, and each entry's keys. */
const ANSWER_OVERHEAD_BYTES = 64 * 1024;
const ANSWER_BYTES_PER_ENTRY = 256;
/** Most bytes of an error answer read for its message; the rest is not read. */
const ERROR_BODY_BYTES = 16 * 1024;

/** Statuses worth another attempt: the provider is busy, failing for now, or timed out. */
const RETRY_STATUS = new Set([408, 409, 429, 500, 502, 503, 504]);

/** Options of `OpenAiEmbedder`. */
export interface OpenAiEmbedderOptions {
  /** API base, e.g. `https://api.openai.com/v1`; `/embeddings` is appended (`embeddingsEndpoint`). */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer`; never in a message or a log. */
  readonly apiKey?: string;
  readonly model: string;
  /** Length of every vector (`EMBEDDINGS_DIMENSIONS`). */
  readonly dimensions: number;
  /** Send `dimensions` in the request (`EMBEDDINGS_SEND_DIMENSIONS`). @default false */
  readonly sendDimensions?: boolean;
  /** `encoding_format` asked for (`EMBEDDINGS_ENCODING`); either is read. @default 'float' */
  readonly encoding?: EmbeddingsEncoding;
  /** Most texts a call (`EMBEDDINGS_BATCH_SIZE`). */
  readonly batchSize: number;
  /** Timeout of one call, the whole answer read (`EMBEDDINGS_TIMEOUT_MS`). */
  readonly timeoutMs: number;
  /** Retries after a failed call (`EMBEDDINGS_MAX_RETRIES`). */
  readonly maxRetries: number;
  /** Longest wait before a retry, backoff and `Retry-After` alike (`EMBEDDINGS_RETRY_MAX_WAIT_MS`). */
  readonly retryMaxWaitMs: number;
  /** First backoff, doubled each retry, ±20 % jitter. @default 500 */
  readonly backoffBaseMs?: number;
  /** Where the reported tokens go (`RequestStats`: `svc_ai_search_total_tokens_used`). */
  readonly tokens: TokenCounter;
  /**
   * Tokens of texts whose answer reported no usage, counted as estimated; without it such calls
   * add nothing (and are logged). @default none
   */
  readonly estimateTokens?: (texts: readonly string[]) => number;
  /** Told of every call (the embedding metrics). */
  readonly observer?: EmbeddingCallObserver;
  readonly logger: Logger;
  /** For tests. @default global fetch */
  readonly fetch?: typeof fetch;
  /** The time an HTTP-date `Retry-After` is measured from. @default systemClock */
  readonly clock?: Clock;
  /** The wait between attempts (tests inject one that does not wait). @default a timer, ended by the signal */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The jitter's source, in [0, 1). @default Math.random */
  readonly random?: () => number;
}

/** A failed attempt. */
class AttemptFailure extends Error {
  constructor(
    readonly reason: EmbeddingErrorReason,
    message: string,
    readonly retry: boolean,
    readonly status?: number,
    readonly retryAfterMs?: number,
    readonly usage?: EmbeddingUsage,
  ) {
    super(message);
  }
}

function timerSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason as Error);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function reasonOfStatus(status: number): EmbeddingErrorReason {
  if (status === 429) return 'rate_limited';
  if (status >= 500 || status === 408 || status === 409) return 'server_error';
  return 'client_error';
}

/** The base URL as messages may show it: a password in it masked. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/**
 * A client of the OpenAI-compatible embeddings protocol (OpenAI, Ollama, vLLM,
 * text-embeddings-inference, LiteLLM…): `POST {baseUrl}/embeddings` with `{model, input,
 * dimensions?, encoding_format}`, the texts in batches of `batchSize`, one call after another.
 *
 * Bounded whatever the provider does (as issue 37 made the chat): each call has `timeoutMs` for
 * its whole answer (a provider that trickles bytes does not extend it); an answer may hold at most
 * the bytes its vectors can take as JSON (`ANSWER_BYTES_PER_NUMBER` a number, a declared
 * `Content-Length` past it is refused before reading), an error answer is read to 16 KiB; the
 * answer is checked whole (`parseEmbeddingAnswer`) and a wrong one is an error, never a vector.
 * 429, 5xx, 408, 409, network errors and timeouts are retried with exponential backoff and jitter,
 * waiting at least what `Retry-After` asks (seconds or an HTTP date); a `Retry-After` past
 * `retryMaxWaitMs` ends the call at once with the wait in the error, for the caller to resume
 * later. Messages never hold the API key, even where a provider echoes it.
 *
 * Every token a provider reports in `usage` is added to `tokens` as it arrives, an invalid
 * answer's too (the provider billed them); an answer without usage is estimated when
 * `estimateTokens` is given.
 */
export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  private readonly url: string;
  private readonly fetchFn: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly clock: Clock;

  constructor(private readonly opts: OpenAiEmbedderOptions) {
    this.model = opts.model;
    this.dimensions = opts.dimensions;
    this.url = `${opts.baseUrl.replace(/\/+$/, '')}/embeddings`;
    this.fetchFn = opts.fetch ?? fetch;
    this.sleep = opts.sleep ?? timerSleep;
    this.random = opts.random ?? Math.random;
    this.clock = opts.clock ?? systemClock;
  }

  /** Most bytes of a successful answer for `count` texts. */
  answerBytes(count: number): number {
    return count * (this.dimensions * ANSWER_BYTES_PER_NUMBER + ANSWER_BYTES_PER_ENTRY) + ANSWER_OVERHEAD_BYTES;
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Embeddings> {
    if (texts.some((t) => t.length === 0)) throw new RangeError('an empty text cannot be embedded');
    const vectors: Float32Array[] = [];
    let prompt = 0;
    let total = 0;
    for (let start = 0; start < texts.length; start += this.opts.batchSize) {
      const batch = texts.slice(start, start + this.opts.batchSize);
      try {
        const answer = await this.call(batch, options);
        vectors.push(...answer.vectors);
        prompt += answer.usage?.prompt_tokens ?? 0;
        total += answer.usage?.total_tokens ?? 0;
      } catch (e) {
        if (e instanceof EmbeddingError && vectors.length)
          throw new EmbeddingError(e.reason, e.message, { ...e.details, partial: vectors });
        throw e;
      }
    }
    return { vectors, usage: { prompt_tokens: prompt, total_tokens: total } };
  }

  /** Removes the API key from a text a provider sent back. */
  private scrub(text: string): string {
    const key = this.opts.apiKey;
    return key && key.length >= 4 ? text.split(key).join('<hidden>') : text;
  }

  private countTokens(texts: readonly string[], usage: EmbeddingUsage | undefined, problem?: string): void {
    if (usage) {
      this.opts.tokens.addTokens(usage.total_tokens);
      return;
    }
    if (problem) this.opts.logger.warn({ problem }, 'the embeddings provider reported usage that is not a count');
    if (this.opts.estimateTokens) this.opts.tokens.addTokens(this.opts.estimateTokens(texts), { estimated: true });
    else this.opts.logger.warn('the embeddings provider reported no usage; its tokens are not counted');
  }

  /** One batch, with retries. */
  private async call(texts: readonly string[], options: EmbedOptions): Promise<EmbeddingAnswer> {
    const { signal } = options;
    const maxRetries = options.maxRetries ?? this.opts.maxRetries;
    const cap = this.opts.retryMaxWaitMs;
    const base = this.opts.backoffBaseMs ?? 500;
    let last: AttemptFailure | undefined;
    let attempts = 0;
    for (let n = 0; n <= maxRetries; n++) {
      if (n > 0 && last) {
        if (last.retryAfterMs !== undefined && last.retryAfterMs > cap) break;
        const backoff = Math.min(cap, base * 2 ** (n - 1)) * (0.8 + this.random() * 0.4);
        const wait = Math.min(cap, Math.max(backoff, last.retryAfterMs ?? 0));
        this.opts.logger.warn(
          { attempt: n + 1, waitMs: Math.round(wait), reason: last.message },
          'embeddings call failed; retrying',
        );
        await this.sleep(wait, signal);
      }
      if (signal?.aborted) throw signal.reason;
      attempts += 1;
      const started = performance.now();
      try {
        const answer = await this.attempt(texts, signal);
        this.opts.observer?.call((performance.now() - started) / 1000);
        this.countTokens(texts, answer.usage, answer.usageProblem);
        return answer;
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        last = this.failureOf(e);
        this.opts.observer?.call((performance.now() - started) / 1000, last.reason);
        if (last.usage) this.opts.tokens.addTokens(last.usage.total_tokens);
        if (!last.retry) break;
      }
    }
    const f = last!;
    const waitTooLong = f.retryAfterMs !== undefined && f.retryAfterMs > cap && attempts <= maxRetries;
    throw new EmbeddingError(
      f.reason,
      `the embeddings provider failed: ${f.message} (${attempts} attempt${attempts === 1 ? '' : 's'}${
        waitTooLong ? `; it asks to wait ${Math.ceil(f.retryAfterMs! / 1000)} s, past EMBEDDINGS_RETRY_MAX_WAIT_MS` : ''
      })`,
      {
        attempts,
        ...(f.status === undefined ? {} : { status: f.status }),
        ...(f.retryAfterMs === undefined ? {} : { retryAfterMs: f.retryAfterMs }),
      },
    );
  }

  private failureOf(e: unknown): AttemptFailure {
    if (e instanceof AttemptFailure) return e;
    if (e instanceof InvalidAnswer)
      return new AttemptFailure('invalid_answer', this.scrub(e.message), false, undefined, undefined, e.usage);
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause ? ` (${cause.code ?? cause.message ?? ''})` : '';
    return new AttemptFailure(
      'network',
      `could not reach ${shownUrl(this.url)}: ${this.scrub((e as Error).message)}${this.scrub(detail)}`,
      true,
    );
  }

  private body(texts: readonly string[]): string {
    return JSON.stringify({
      model: this.opts.model,
      input: texts,
      encoding_format: this.opts.encoding ?? 'float',
      ...(this.opts.sendDimensions ? { dimensions: this.dimensions } : {}),
    });
  }

  /** One call: its own timeout over the whole answer, the answer bounded and checked. */
  private async attempt(texts: readonly string[], signal: AbortSignal | undefined): Promise<EmbeddingAnswer> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error('timeout')), this.opts.timeoutMs);
    const both = signal ? AbortSignal.any([timeout.signal, signal]) : timeout.signal;
    try {
      const res = await this.fetchFn(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
        },
        body: this.body(texts),
        signal: both,
      });
      if (!res.ok) {
        const { text } = await this.read(res, ERROR_BODY_BYTES);
        throw new AttemptFailure(
          reasonOfStatus(res.status),
          `HTTP ${res.status}: ${this.errorText(text)}`,
          RETRY_STATUS.has(res.status),
          res.status,
          parseRetryAfter(res.headers.get('retry-after'), this.clock.now()),
        );
      }
      const limit = this.answerBytes(texts.length);
      const declared = Number(res.headers.get('content-length') ?? NaN);
      if (declared > limit) {
        await res.body?.cancel().catch(() => undefined);
        throw this.tooLarge(limit, `declares ${declared} bytes`);
      }
      const { text, cut } = await this.read(res, limit);
      if (cut) throw this.tooLarge(limit, 'goes on past it');
      return parseEmbeddingAnswer(text, { count: texts.length, dimensions: this.dimensions });
    } catch (e) {
      if (timeout.signal.aborted && !signal?.aborted)
        throw new AttemptFailure('timeout', `no whole answer within ${this.opts.timeoutMs} ms`, true);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  private tooLarge(limit: number, what: string): AttemptFailure {
    return new AttemptFailure(
      'too_large',
      `the answer ${what}, more than the ${limit} bytes its vectors can take`,
      false,
    );
  }

  /** At most `limit` bytes of the body; `cut` when there was more (the rest is not read). */
  private async read(res: Response, limit: number): Promise<{ text: string; cut: boolean }> {
    if (!res.body) return { text: '', cut: false };
    const reader = res.body.getReader();
    const parts: Uint8Array[] = [];
    let bytes = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.length;
        if (bytes > limit) {
          parts.push(value.subarray(0, value.length - (bytes - limit)));
          await reader.cancel().catch(() => undefined);
          return { text: Buffer.concat(parts).toString('utf8'), cut: true };
        }
        parts.push(value);
      }
    } catch (e) {
      await reader.cancel().catch(() => undefined);
      throw e;
    }
    return { text: Buffer.concat(parts).toString('utf8'), cut: false };
  }

  /** The provider's error message (JSON `error.message` or the text), short, without the key. */
  private errorText(body: string): string {
    let msg: string | undefined;
    try {
      const j = JSON.parse(body) as { error?: { message?: unknown } | string };
      const m = typeof j.error === 'string' ? j.error : j.error?.message;
      if (typeof m === 'string') msg = m;
    } catch {
      // not JSON: quote the text
    }
    const text = (msg ?? body).replace(/\s+/g, ' ').trim();
    return this.scrub(text).slice(0, 300) || '(empty body)';
  }
}
