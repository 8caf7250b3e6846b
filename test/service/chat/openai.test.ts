import { OpenAiProvider, type OpenAiOptions } from '../../../service/chat/openai';
import { ProviderError, type CompletionChunk, type CompletionRequest } from '../../../service/chat/types';
import { silentLogger } from '../../../service/lib/logger';
import { FakeOpenAi, type FakeUsage } from '../../../tools/harness/fake-openai';

const req = (over: Partial<CompletionRequest> = {}): CompletionRequest => ({
  messages: [
    { role: 'system', content: 'sources' },
    { role: 'user', content: 'question?' },
  ],
  question: 'question?',
  passages: [],
  maxTokens: 64,
  temperature: 0.1,
  ...over,
});

async function collect(it: AsyncIterable<CompletionChunk>): Promise<CompletionChunk[]> {
  const out: CompletionChunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

describe('OpenAiProvider against a real HTTP server speaking the protocol', () => {
  let fake: FakeOpenAi;
  let provider: OpenAiProvider;
  /** The same with a short timeout, for the tests of a silent server (elsewhere a slow machine must not time out). */
  let impatient: OpenAiProvider;
  const build = (timeoutMs: number) =>
    new OpenAiProvider({
      baseUrl: `${fake.url}/`,
      apiKey: 'sk-unit',
      model: 'gpt-unit',
      timeoutMs,
      maxRetries: 2,
      backoffBaseMs: 10,
      backoffMaxMs: 50,
      logger: silentLogger(),
    });
  beforeAll(async () => {
    fake = await FakeOpenAi.start();
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.reset();
    provider = build(10_000);
    impatient = build(300);
  });

  it('posts the chat-completions request and returns content, usage and model', async () => {
    fake.enqueue({ kind: 'json', content: 'Hello [1]', model: 'gpt-unit-2024' });
    const done = await provider.complete(req());
    expect(done).toEqual({
      text: 'Hello [1]',
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
      model: 'gpt-unit-2024',
    });
    const sent = fake.requests[0];
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-unit');
    expect(sent.body).toEqual({ model: 'gpt-unit', messages: req().messages, max_tokens: 64, temperature: 0.1 });
  });

  it('leaves usage undefined when the server reports none (the service then counts)', async () => {
    fake.enqueue({ kind: 'json', content: 'x', usage: null });
    expect((await provider.complete(req())).usage).toBeUndefined();
  });

  it('retries 5xx, 429 and resets with backoff, then succeeds', async () => {
    fake.enqueue({ kind: 'status', status: 500 }, { kind: 'reset' }, { kind: 'json', content: 'third time' });
    expect((await provider.complete(req())).text).toBe('third time');
    expect(fake.requests).toHaveLength(3);
  });

  it('honours Retry-After (seconds) on 429', async () => {
    fake.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '0.2' } }, { kind: 'json', content: 'ok' });
    const t0 = Date.now();
    // Retry-After 200 ms is above the 50 ms backoff cap here: the cap wins, so the wait is bounded.
    await provider.complete(req());
    expect(Date.now() - t0).toBeGreaterThanOrEqual(40);
    expect(fake.requests).toHaveLength(2);
  });

  it('gives up after maxRetries with a 502-kind error naming the status', async () => {
    fake.enqueue({ kind: 'status', status: 503 }, { kind: 'status', status: 503 }, { kind: 'status', status: 503 });
    const err = await provider.complete(req()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: 'upstream', upstreamStatus: 503 });
    expect((err as Error).message).toMatch(/HTTP 503.*3 attempts/);
  });

  it('does not retry a 4xx other than 408/409/429 and quotes the upstream message', async () => {
    fake.enqueue({ kind: 'status', status: 401, body: '{"error":{"message":"Incorrect API key provided"}}' });
    const err = (await provider.complete(req()).catch((e: unknown) => e)) as ProviderError;
    expect(err.kind).toBe('upstream');
    expect(err.message).toMatch(/HTTP 401: Incorrect API key provided/);
    expect(fake.requests).toHaveLength(1);
  });

  it('times out each attempt and ends with a timeout (504-kind) error', async () => {
    fake.enqueue({ kind: 'hang' }, { kind: 'hang' }, { kind: 'hang' });
    const err = (await impatient.complete(req()).catch((e: unknown) => e)) as ProviderError;
    expect(err.kind).toBe('timeout');
    expect(fake.requests).toHaveLength(3);
  });

  it('reads the answer under way to its end when the client goes away (its usage is counted), and starts none after', async () => {
    fake.enqueue({
      kind: 'json',
      content: 'late',
      delayMs: 300,
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    });
    const ctrl = new AbortController();
    const p = provider.complete(req({ signal: ctrl.signal }));
    setTimeout(() => ctrl.abort(), 50);
    await expect(p).resolves.toMatchObject({ text: 'late', usage: { total_tokens: 6 } });
    const gone = new AbortController();
    gone.abort();
    await expect(provider.complete(req({ signal: gone.signal }))).rejects.toThrow(/client went away/);
    expect(fake.requests).toHaveLength(1);
  });

  it('streams deltas then done with the usage chunk (stream_options.include_usage)', async () => {
    fake.enqueue({ kind: 'stream', chunks: ['Hel', 'lo', ' [1]'] });
    const chunks = await collect(provider.stream(req()));
    expect(chunks).toEqual([
      { kind: 'start' },
      { kind: 'delta', text: 'Hel' },
      { kind: 'delta', text: 'lo' },
      { kind: 'delta', text: ' [1]' },
      { kind: 'done', usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 }, model: 'gpt-unit' },
    ]);
    expect(fake.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(fake.requests[0].headers.accept).toBe('text/event-stream');
  });

  it('streams without usage when the server sends none', async () => {
    fake.enqueue({ kind: 'stream', chunks: ['a'], usage: null });
    const chunks = await collect(provider.stream(req()));
    expect(chunks.at(-1)).toEqual({ kind: 'done', usage: undefined, model: 'gpt-unit' });
  });

  it('retries a stream that fails before its first chunk', async () => {
    fake.enqueue({ kind: 'status', status: 502 }, { kind: 'stream', chunks: ['ok'] });
    const chunks = await collect(provider.stream(req()));
    expect(chunks.slice(0, 2)).toEqual([{ kind: 'start' }, { kind: 'delta', text: 'ok' }]);
    expect(fake.requests).toHaveLength(2);
  });

  it('fails mid-stream on an error chunk, a cut connection or silence, without retrying', async () => {
    fake.enqueue({ kind: 'stream', chunks: ['a', 'b'], breakAfter: 1, breakWith: 'error' });
    await expect(collect(provider.stream(req()))).rejects.toMatchObject({
      kind: 'upstream',
      message: expect.stringMatching(/mid-answer/),
    });
    fake.enqueue({ kind: 'stream', chunks: ['a', 'b'], breakAfter: 1, breakWith: 'cut' });
    await expect(collect(provider.stream(req()))).rejects.toMatchObject({ kind: 'upstream' });
    fake.enqueue({ kind: 'stream', chunks: ['a', 'b'], breakAfter: 1, breakWith: 'hang' });
    await expect(collect(impatient.stream(req()))).rejects.toMatchObject({ kind: 'timeout' });
    expect(fake.requests).toHaveLength(3);
  });

  describe('bounded whatever the provider sends (issue 37)', () => {
    const bounded = (over: Partial<OpenAiOptions>) =>
      new OpenAiProvider({
        baseUrl: fake.url,
        model: 'gpt-unit',
        timeoutMs: 10_000,
        maxRetries: 2,
        backoffBaseMs: 10,
        backoffMaxMs: 50,
        logger: silentLogger(),
        ...over,
      });
    /** A request whose deadline fires after `ms`, as ChatService sets it. */
    const withDeadline = (ms: number) => {
      const ctrl = new AbortController();
      setTimeout(
        () => ctrl.abort(new ProviderError('timeout', 'time is up', undefined, { limit: 'AI_ANSWER_TIMEOUT_MS' })),
        ms,
      );
      return req({ deadline: ctrl.signal });
    };

    it('gives up on a stream whose first event does not come within the first-byte limit, retries included', async () => {
      fake.enqueue({ kind: 'hang' }, { kind: 'hang' }, { kind: 'hang' });
      const err = await collect(bounded({ firstByteTimeoutMs: 300 }).stream(req())).catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'timeout', limit: 'AI_FIRST_BYTE_TIMEOUT_MS' });
      // The per-attempt timeout (10 s) never came: one attempt, cut by the first-byte limit.
      expect(fake.requests).toHaveLength(1);
    });

    it('ends a stream of empty chunks at its deadline, though every chunk arrives in time', async () => {
      fake.enqueue({ kind: 'drip', everyMs: 50 });
      const chunks: CompletionChunk[] = [];
      const err = await (async () => {
        for await (const c of bounded({ timeoutMs: 1000 }).stream(withDeadline(400))) chunks.push(c);
      })().catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'timeout', limit: 'AI_ANSWER_TIMEOUT_MS' });
      expect(chunks).toEqual([{ kind: 'start' }]);
      await fake.requests[0].closed;
    });

    it('refuses an event larger than the limit without buffering the rest of it', async () => {
      fake.enqueue({ kind: 'flood', deltas: 1, deltaChars: 10 }, { kind: 'unterminated' });
      const p = bounded({ maxEventBytes: 64 * 1024 });
      // An event under the limit passes.
      expect((await collect(p.stream(req()))).filter((c) => c.kind === 'delta')).toEqual([
        { kind: 'delta', text: 'y'.repeat(10) },
      ]);
      // A line that never ends: refused once it passes 64 KiB; the connection is closed.
      await expect(collect(p.stream(req()))).rejects.toMatchObject({ kind: 'upstream', limit: 'AI_EVENT_MAX_BYTES' });
      await fake.requests[1].closed;
      expect(fake.requests).toHaveLength(2);
    });

    it('refuses a JSON answer larger than the limit, keeping what was read for the estimate', async () => {
      fake.enqueue({ kind: 'json', content: 'z'.repeat(200_000) });
      const err = (await bounded({ maxEventBytes: 64 * 1024 })
        .complete(req())
        .catch((e: unknown) => e)) as ProviderError;
      expect(err).toMatchObject({ kind: 'upstream', limit: 'AI_EVENT_MAX_BYTES' });
      expect(err.answerText!.length).toBeGreaterThan(0);
      expect(err.answerText!.length).toBeLessThanOrEqual(64 * 1024);
      expect(fake.requests).toHaveLength(1);
    });

    it('ends a JSON answer at its deadline (504-kind, no retry)', async () => {
      fake.enqueue({ kind: 'hang' }, { kind: 'hang' });
      await expect(bounded({}).complete(withDeadline(300))).rejects.toMatchObject({
        kind: 'timeout',
        limit: 'AI_ANSWER_TIMEOUT_MS',
      });
      expect(fake.requests).toHaveLength(1);
    });

    it.each([
      ['a negative count', { prompt_tokens: -5000, completion_tokens: 3, total_tokens: -4997 }],
      ['a fraction', { prompt_tokens: 1.5, completion_tokens: 3, total_tokens: 4.5 }],
      ['a total below its parts', { prompt_tokens: 10, completion_tokens: 3, total_tokens: 2 }],
    ])('refuses usage with %s (the caller estimates) and says so', async (_what, usage) => {
      const warned: unknown[] = [];
      const logger = Object.assign(silentLogger(), { warn: (o: unknown) => void warned.push(o) });
      fake.enqueue(
        { kind: 'stream', chunks: ['a'], usage: usage as FakeUsage },
        { kind: 'json', content: 'b', usage: usage as FakeUsage },
      );
      const p = bounded({ logger });
      expect((await collect(p.stream(req()))).at(-1)).toEqual({ kind: 'done', usage: undefined, model: 'gpt-unit' });
      expect((await p.complete(req())).usage).toBeUndefined();
      expect(warned).toHaveLength(2);
    });

    it('reads the provider only as fast as its chunks are taken (backpressure)', async () => {
      fake.enqueue({ kind: 'flood', deltas: 300, deltaChars: 1_000_000 });
      const it = bounded({}).stream(req())[Symbol.asyncIterator]();
      expect((await it.next()).value).toEqual({ kind: 'start' });
      expect((await it.next()).value).toMatchObject({ kind: 'delta' });
      // Nothing taken for a while: without backpressure the fake would go on writing its 300 MB.
      // What it can write is bounded by the socket buffers and the fetch body's queue; a slow
      // machine writes less, never more.
      await new Promise((r) => setTimeout(r, 500));
      expect(fake.requests[0].sent.bytes).toBeLessThan(32 * 1024 * 1024);
      await it.return!(undefined);
      await fake.requests[0].closed;
    });
  });
});
