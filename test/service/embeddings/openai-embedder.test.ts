import { Registry } from 'prom-client';
import { EMBEDDING_ERROR_REASONS, METRICS } from '../../../contract';
import { EmbeddingError, OpenAiEmbedder, type OpenAiEmbedderOptions } from '../../../service/embeddings';
import { silentLogger } from '../../../service/lib/logger';
import { EmbeddingMetrics } from '../../../service/metrics/embedding-metrics';
import { RequestStats } from '../../../service/metrics/request-stats';
import { fakeEmbedding, fakeEmbeddingTokens } from '../../../tools/harness/fake-embeddings';
import { FakeOpenAi } from '../../../tools/harness/fake-openai';
import { capture } from '../../helpers/log-capture';

const KEY = 'sk-embed-unit-7a9c2e';
const DIMS = 8;
const NOW = Date.parse('2026-01-01T00:00:00Z');

/** Every wait the embedder asked for, answered at once (no test waits for a backoff). */
interface Waits {
  readonly waits: number[];
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
function instantSleep(): Waits {
  const waits: number[] = [];
  return {
    waits,
    sleep: (ms, signal) => {
      waits.push(ms);
      return signal?.aborted ? Promise.reject(signal.reason as Error) : Promise.resolve();
    },
  };
}

describe('OpenAiEmbedder against the fake provider on loopback', () => {
  let fake: FakeOpenAi;
  let stats: RequestStats;
  let registry: Registry;
  let metrics: EmbeddingMetrics;
  let waits: Waits;
  const build = (over: Partial<OpenAiEmbedderOptions> = {}) =>
    new OpenAiEmbedder({
      baseUrl: `${fake.url}/`,
      apiKey: KEY,
      model: 'embed-unit',
      dimensions: DIMS,
      batchSize: 4,
      // Generous: a busy machine must not turn a good answer into a timeout (issue 36).
      timeoutMs: 10_000,
      maxRetries: 2,
      retryMaxWaitMs: 30_000,
      tokens: stats,
      observer: metrics,
      logger: silentLogger(),
      sleep: waits.sleep,
      // Jitter at its middle: the waits are the backoff itself.
      random: () => 0.5,
      clock: { now: () => NOW },
      ...over,
    });
  const counter = async (name: string, labels = '') => {
    const text = await registry.metrics();
    const m = new RegExp(`^${name}${labels ? `\\{${labels}\\}` : ''} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const reasonOf = async (p: Promise<unknown>) => {
    const e = await p.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(EmbeddingError);
    return e as EmbeddingError;
  };

  beforeAll(async () => {
    fake = await FakeOpenAi.start();
    fake.embeddingDimensions = DIMS;
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.reset();
    stats = new RequestStats({ now: () => NOW });
    registry = new Registry();
    metrics = new EmbeddingMetrics(registry);
    waits = instantSleep();
  });

  it('posts the texts in batches, returns the vectors in order, and counts exactly the tokens billed', async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `text number ${i} about automobiles`);
    const out = await build().embed(texts);
    const calls = fake.requests.filter((r) => r.path === '/v1/embeddings');
    expect(calls.map((r) => (r.body.input as string[]).length)).toEqual([4, 4, 2]);
    expect(calls[0].body).toEqual({ model: 'embed-unit', input: texts.slice(0, 4), encoding_format: 'float' });
    expect(calls[0].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(out.vectors.map((v) => Array.from(v))).toEqual(texts.map((t) => Array.from(fakeEmbedding(t, DIMS))));
    expect(out.usage).toEqual({ prompt_tokens: fakeEmbeddingTokens(texts), total_tokens: fakeEmbeddingTokens(texts) });
    expect(stats.snapshot().tokensUsed).toBe(fake.embeddingTokensBilled);
    expect(fake.embeddingTokensBilled).toBe(fakeEmbeddingTokens(texts));
    expect(await counter(METRICS.embeddingCallsTotal)).toBe(3);
    expect(await counter(`${METRICS.embeddingCallDuration}_count`)).toBe(3);
  });

  it('asks for base64 and dimensions when told to, and reads the float32 exactly', async () => {
    const out = await build({ encoding: 'base64', sendDimensions: true }).embed(['a big house by the sea']);
    expect(fake.requests[0].body).toMatchObject({ encoding_format: 'base64', dimensions: DIMS });
    expect(Array.from(out.vectors[0])).toEqual(Array.from(fakeEmbedding('a big house by the sea', DIMS)));
  });

  it('embeds nothing for no text, and refuses an empty one before any call', async () => {
    expect(await build().embed([])).toEqual({ vectors: [], usage: { prompt_tokens: 0, total_tokens: 0 } });
    await expect(build().embed(['x', ''])).rejects.toThrow(RangeError);
    expect(fake.requests).toHaveLength(0);
  });

  it('retries 500, 503 and a cut connection with exponential backoff, then answers', async () => {
    fake.enqueueEmbeddings({ kind: 'status', status: 500 }, { kind: 'reset' }, { kind: 'vectors' });
    const out = await build({ maxRetries: 3 }).embed(['one']);
    expect(out.vectors).toHaveLength(1);
    expect(waits.waits).toEqual([500, 1000]);
    expect(await counter(METRICS.embeddingCallsTotal)).toBe(3);
    expect(await counter(METRICS.embeddingErrorsTotal, 'reason="server_error"')).toBe(1);
    expect(await counter(METRICS.embeddingErrorsTotal, 'reason="network"')).toBe(1);
    expect(await counter(METRICS.embeddingErrorsTotal, 'reason="rate_limited"')).toBe(0);
  });

  it('honours Retry-After on 429 and 503, in seconds or as an HTTP date, when longer than the backoff', async () => {
    fake.enqueueEmbeddings(
      { kind: 'status', status: 429, headers: { 'retry-after': '7' } },
      { kind: 'status', status: 503, headers: { 'retry-after': new Date(NOW + 12_000).toUTCString() } },
      { kind: 'vectors' },
    );
    await build().embed(['one']);
    expect(waits.waits).toEqual([7000, 12000]);
  });

  it('caps the wait: a Retry-After past EMBEDDINGS_RETRY_MAX_WAIT_MS ends the call at once, with the wait in the error', async () => {
    fake.enqueueEmbeddings({ kind: 'status', status: 429, headers: { 'retry-after': '3600' } });
    const e = await reasonOf(build({ retryMaxWaitMs: 60_000 }).embed(['one']));
    expect(e.reason).toBe('rate_limited');
    expect(e.details).toMatchObject({ status: 429, retryAfterMs: 3_600_000, attempts: 1 });
    expect(e.message).toContain('it asks to wait 3600 s, past EMBEDDINGS_RETRY_MAX_WAIT_MS');
    expect(waits.waits).toEqual([]);
    // A backoff longer than the cap waits the cap.
    fake.enqueueEmbeddings({ kind: 'status', status: 500 }, { kind: 'vectors' });
    await build({ retryMaxWaitMs: 200 }).embed(['one']);
    expect(waits.waits).toEqual([200]);
  });

  it('fails after the retries with the last reason; a 4xx other than 408, 409 and 429 is not retried', async () => {
    fake.embeddingFallback = { kind: 'status', status: 502 };
    try {
      const e = await reasonOf(build().embed(['one']));
      expect(e).toMatchObject({ reason: 'server_error', details: { status: 502, attempts: 3 } });
      expect(e.message).toBe('the embeddings provider failed: HTTP 502: fake error 502 (3 attempts)');
    } finally {
      fake.embeddingFallback = { kind: 'vectors' };
    }
    fake.enqueueEmbeddings({ kind: 'status', status: 400, body: '{"error":{"message":"bad model"}}' });
    const bad = await reasonOf(build().embed(['one']));
    expect(bad).toMatchObject({ reason: 'client_error', details: { status: 400, attempts: 1 } });
    expect(await counter(METRICS.embeddingErrorsTotal, 'reason="client_error"')).toBe(1);
  });

  it('times out a call that never answers, or trickles, within its timeout, and retries it', async () => {
    fake.enqueueEmbeddings({ kind: 'hang' }, { kind: 'trickle', everyMs: 20 });
    const e = await reasonOf(build({ timeoutMs: 300, maxRetries: 1 }).embed(['one']));
    expect(e).toMatchObject({ reason: 'timeout', details: { attempts: 2 } });
    expect(e.message).toContain('no whole answer within 300 ms');
    expect(await counter(METRICS.embeddingErrorsTotal, 'reason="timeout"')).toBe(2);
  });

  it.each([
    ['a wrong dimension', { kind: 'vectors', dimensions: DIMS + 1 } as const, 'data[0].embedding has 9 numbers, not 8'],
    ['a vector left out', { kind: 'vectors', drop: 1 } as const, 'the answer holds 1 vectors for 2 texts'],
    [
      'a number past float32',
      { kind: 'vectors', nonFinite: true } as const,
      'data[0].embedding[0] is not a finite float32',
    ],
  ])('refuses %s, without retrying, and still counts the tokens it billed', async (_what, reply, message) => {
    fake.enqueueEmbeddings(reply);
    const e = await reasonOf(build().embed(['first text', 'second text']));
    expect(e.reason).toBe('invalid_answer');
    expect(e.message).toContain(message);
    expect(e.details.attempts).toBe(1);
    expect(fake.embeddingTokensBilled).toBe(4);
    expect(stats.snapshot().tokensUsed).toBe(4);
    expect(await counter(METRICS.embeddingErrorsTotal, 'reason="invalid_answer"')).toBe(1);
  });

  it('refuses a base64 vector of the wrong length', async () => {
    fake.enqueueEmbeddings({ kind: 'vectors', dimensions: 4 });
    const e = await reasonOf(build({ encoding: 'base64' }).embed(['one']));
    expect(e.message).toContain('data[0].embedding holds 4 float32, not 8');
  });

  it('stops reading a body past the bytes its vectors can take, and closes the connection', async () => {
    const embedder = build({ maxRetries: 0 });
    fake.enqueueEmbeddings({ kind: 'huge' });
    const e = await reasonOf(embedder.embed(['one']));
    expect(e.reason).toBe('too_large');
    expect(e.message).toContain(`more than the ${embedder.answerBytes(1)} bytes its vectors can take`);
    await fake.requests[0].closed;
    // A declared Content-Length past the bound is refused before the body is read.
    fake.enqueueEmbeddings({ kind: 'vectors', dimensions: 200_000 });
    const declared = await reasonOf(embedder.embed(['one']));
    expect(declared.message).toMatch(/the answer declares \d+ bytes, more than/);
    expect(await counter(METRICS.embeddingErrorsTotal, 'reason="too_large"')).toBe(2);
  });

  it('never shows the key, even when the provider echoes it, in errors or logs', async () => {
    const { logger, lines } = capture();
    fake.enqueueEmbeddings(
      { kind: 'status', status: 503, body: `{"error":{"message":"overloaded for key ${KEY}"}}` },
      { kind: 'status', status: 401, body: `{"error":{"message":"Incorrect API key provided: ${KEY}"}}` },
    );
    const e = await reasonOf(build({ logger }).embed(['one']));
    expect(e.message).toBe(
      'the embeddings provider failed: HTTP 401: Incorrect API key provided: <hidden> (2 attempts)',
    );
    expect(JSON.stringify(lines)).not.toContain(KEY);
    expect(JSON.stringify(lines)).toContain('overloaded for key <hidden>');
  });

  it('keeps the vectors of the batches before a failure in the error', async () => {
    fake.enqueueEmbeddings({ kind: 'vectors' }, { kind: 'status', status: 400 });
    const e = await reasonOf(build().embed(['a', 'b', 'c', 'd', 'e']));
    expect(e.details.partial).toHaveLength(4);
  });

  it('stops when the caller aborts, during a wait too, and counts no failure for it', async () => {
    const ctrl = new AbortController();
    fake.enqueueEmbeddings({ kind: 'status', status: 500 });
    const sleep = (_ms: number, signal?: AbortSignal) => {
      ctrl.abort(new Error('the client went away'));
      return Promise.reject(signal?.reason as Error);
    };
    await expect(build({ sleep }).embed(['one'], { signal: ctrl.signal })).rejects.toThrow('the client went away');
    expect(fake.requests).toHaveLength(1);
  });

  it('takes fewer retries for a caller that cannot wait', async () => {
    fake.enqueueEmbeddings({ kind: 'status', status: 500 }, { kind: 'vectors' });
    const e = await reasonOf(build().embed(['one'], { maxRetries: 0 }));
    expect(e.details.attempts).toBe(1);
  });

  it('counts a usage that is no count as nothing (or the estimate given), and says so in the log', async () => {
    const { logger, lines } = capture();
    fake.enqueueEmbeddings({ kind: 'vectors', usage: { prompt_tokens: -3 } }, { kind: 'vectors', usage: null });
    await build({ logger }).embed(['one two']);
    expect(stats.snapshot().tokensUsed).toBe(0);
    await build({ logger, estimateTokens: (t) => t.length * 10 }).embed(['one two']);
    expect(stats.snapshot()).toMatchObject({ tokensUsed: 10, tokensEstimated: 10 });
    expect(lines.map((l) => l.msg)).toEqual([
      'the embeddings provider reported usage that is not a count',
      'the embeddings provider reported no usage; its tokens are not counted',
    ]);
  });

  it('exposes every error reason from 0, and the backlog gauge from its source', async () => {
    const text = await registry.metrics();
    for (const reason of EMBEDDING_ERROR_REASONS)
      expect(text).toContain(`${METRICS.embeddingErrorsTotal}{reason="${reason}"} 0`);
    metrics.readPendingFrom(() => 17);
    expect(await counter(METRICS.embeddingsPending)).toBe(17);
  });
});
