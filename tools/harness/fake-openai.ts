import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerEmbeddings, FAKE_EMBEDDING_DIMENSIONS, type FakeEmbeddingReply } from './fake-embeddings';

/** Token counts as the protocol reports them. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One scripted answer of the fake server. */
export type FakeReply =
  /** A chat.completion JSON body; `usage: null` leaves usage out. */
  | { kind: 'json'; content: string; usage?: FakeUsage | null; model?: string; delayMs?: number }
  /** An SSE stream of `chunks` as deltas, then a usage chunk (unless null) and `[DONE]`. */
  | {
      kind: 'stream';
      chunks: string[];
      usage?: FakeUsage | null;
      model?: string;
      /** Pause before each chunk, ms. */
      delayMs?: number;
      /** After this many chunks: `error` sends an error chunk, `hang` stops sending, `cut` closes the socket. */
      breakAfter?: number;
      breakWith?: 'error' | 'hang' | 'cut';
    }
  /**
   * A hostile stream, written with backpressure (the fake holds one delta, whatever the reader
   * does): `deltas` chunks of `deltaChars` characters each (`Infinity`: until the connection
   * closes, a provider ignoring max_tokens), then a finish, the usage (unless null) and `[DONE]`.
   */
  | { kind: 'flood'; deltas: number; deltaChars: number; usage?: FakeUsage | null; model?: string }
  /** A stream of chunks with empty content, one every `everyMs`, never finishing. */
  | { kind: 'drip'; everyMs: number }
  /** One `data:` line that never ends: `x` after `x`, with backpressure, until the connection closes. */
  | { kind: 'unterminated' }
  /** An HTTP error status with a body and headers. */
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** Accepts the request and never answers. */
  | { kind: 'hang' }
  /** Closes the connection without answering. */
  | { kind: 'reset' };

/** What the fake server received, and how far its answer went. */
export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
  /** Bytes of the answer's body written so far (counted for `flood`, `drip` and `unterminated`). */
  readonly sent: { bytes: number };
  /** Resolves when the connection of this request closed (either side). */
  readonly closed: Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions protocol
 * (`POST /v1/chat/completions`, JSON or SSE with `stream_options.include_usage`), answering from
 * a script of replies so tests can drive successes, streams, errors, hangs and resets; and the
 * embeddings protocol (`POST /v1/embeddings`: deterministic vectors, `fake-embeddings.ts`), from
 * a script of its own.
 */
export class FakeOpenAi {
  readonly requests: FakeRequest[] = [];
  private readonly script: FakeReply[] = [];
  private readonly embeddingScript: FakeEmbeddingReply[] = [];
  /** Tokens billed by `POST /v1/embeddings` answers (their reported `usage.total_tokens`), since start or `reset`. */
  embeddingTokensBilled = 0;
  /** Length of the vectors of `POST /v1/embeddings` when the request names no `dimensions`. */
  embeddingDimensions = FAKE_EMBEDDING_DIMENSIONS;
  /** Reply of `POST /v1/embeddings` when its script is empty. */
  embeddingFallback: FakeEmbeddingReply = { kind: 'vectors' };
  private readonly open = new Set<ServerResponse>();
  /** Reply used when the script is empty. */
  fallback: FakeReply = { kind: 'json', content: 'The answer is 42 [1].' };

  private constructor(private readonly server: Server) {}

  /** Starts on a free loopback port. */
  static async start(): Promise<FakeOpenAi> {
    const holder: { fake?: FakeOpenAi } = {};
    const server = createServer((req, res) => void holder.fake!.handle(req, res));
    const fake = new FakeOpenAi(server);
    holder.fake = fake;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** Base URL to give as `AI_BASE_URL`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Forgets the requests seen and the replies not yet used (between tests). */
  reset(): void {
    this.requests.length = 0;
    this.script.length = 0;
    this.embeddingScript.length = 0;
    this.embeddingTokensBilled = 0;
  }

  /** Appends replies to the script of `POST /v1/embeddings` (used in order, one per request). */
  enqueueEmbeddings(...replies: FakeEmbeddingReply[]): this {
    this.embeddingScript.push(...replies);
    return this;
  }

  /** Appends replies to the script (used in order, one per request). */
  enqueue(...replies: FakeReply[]): this {
    this.script.push(...replies);
    return this;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      // keep {}
    }
    const sent = { bytes: 0 };
    const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, sent, closed });
    if (req.method === 'POST' && req.url === '/v1/embeddings') {
      this.open.add(res);
      res.on('close', () => this.open.delete(res));
      const reply = this.embeddingScript.shift() ?? this.embeddingFallback;
      // Added after the answer, not read before it: a request of an earlier test may end late.
      const billed = await answerEmbeddings(reply, body, res, sent, this.embeddingDimensions);
      this.embeddingTokensBilled += billed;
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const reply = this.script.shift() ?? this.fallback;
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    const model = (body.model as string) ?? 'fake-model';
    switch (reply.kind) {
      case 'hang':
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'status':
        res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
        res.end(reply.body ?? JSON.stringify({ error: { message: `fake error ${reply.status}` } }));
        return;
      case 'json': {
        if (reply.delayMs) await sleep(reply.delayMs);
        const usage =
          reply.usage === undefined ? { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } : reply.usage;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-fake',
            object: 'chat.completion',
            model: reply.model ?? model,
            choices: [{ index: 0, message: { role: 'assistant', content: reply.content }, finish_reason: 'stop' }],
            ...(usage ? { usage } : {}),
          }),
        );
        return;
      }
      case 'flood': {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const m = reply.model ?? model;
        const frame = (obj: unknown) => `data: ${JSON.stringify(obj)}\n\n`;
        // Encoded once: six floods of 300 MB would otherwise spend the test's CPU on encoding.
        const delta = Buffer.from(
          frame({
            id: 'c',
            object: 'chat.completion.chunk',
            model: m,
            choices: [{ index: 0, delta: { content: 'y'.repeat(reply.deltaChars) } }],
          }),
        );
        const ok = await writeAll(res, sent, [
          frame({
            id: 'c',
            object: 'chat.completion.chunk',
            model: m,
            choices: [{ index: 0, delta: { role: 'assistant', content: '' } }],
          }),
        ]);
        if (!ok) return;
        for (let i = 0; i < reply.deltas; i++) if (!(await writeAll(res, sent, [delta]))) return;
        const usage =
          reply.usage === undefined
            ? { prompt_tokens: 20, completion_tokens: reply.deltas, total_tokens: 20 + reply.deltas }
            : reply.usage;
        const tail = [
          frame({
            id: 'c',
            object: 'chat.completion.chunk',
            model: m,
            choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
          }),
        ];
        if (usage) tail.push(frame({ id: 'c', object: 'chat.completion.chunk', model: m, choices: [], usage }));
        tail.push('data: [DONE]\n\n');
        if (await writeAll(res, sent, tail)) res.end();
        return;
      }
      case 'drip': {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const empty = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta: { content: '' } }] })}\n\n`;
        while (!res.destroyed && !res.writableEnded) {
          if (!(await writeAll(res, sent, [empty]))) return;
          await sleep(reply.everyMs);
        }
        return;
      }
      case 'unterminated': {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const piece = 'x'.repeat(64 * 1024);
        if (!(await writeAll(res, sent, ['data: ']))) return;
        while (await writeAll(res, sent, [piece]));
        return;
      }
      case 'stream': {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const send = (obj: unknown) => res.write(`data: ${typeof obj === 'string' ? obj : JSON.stringify(obj)}\n\n`);
        const m = reply.model ?? model;
        send({
          id: 'c',
          object: 'chat.completion.chunk',
          model: m,
          choices: [{ index: 0, delta: { role: 'assistant', content: '' } }],
        });
        for (let i = 0; i < reply.chunks.length; i++) {
          if (reply.breakAfter === i) {
            if (reply.breakWith === 'hang') return;
            if (reply.breakWith === 'cut') {
              // Let the chunks already written reach the client first.
              await sleep(50);
              req.socket.destroy();
              return;
            }
            send({ error: { message: 'fake failure mid-stream' } });
            res.end();
            return;
          }
          if (reply.delayMs) await sleep(reply.delayMs);
          send({
            id: 'c',
            object: 'chat.completion.chunk',
            model: m,
            choices: [{ index: 0, delta: { content: reply.chunks[i] } }],
          });
        }
        send({
          id: 'c',
          object: 'chat.completion.chunk',
          model: m,
          choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        });
        const usage =
          reply.usage === undefined
            ? { prompt_tokens: 20, completion_tokens: reply.chunks.length, total_tokens: 20 + reply.chunks.length }
            : reply.usage;
        if (usage) send({ id: 'c', object: 'chat.completion.chunk', model: m, choices: [], usage });
        send('[DONE]');
        res.end();
        return;
      }
    }
  }

  /** Stops the server, cutting hanging requests. */
  async close(): Promise<void> {
    for (const res of this.open) res.socket?.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Writes `parts` in order, waiting for 'drain' whenever the socket is full: false once the
 * connection has closed (the reader went away), true when all was handed to the socket.
 */
async function writeAll(
  res: ServerResponse,
  sent: { bytes: number },
  parts: ReadonlyArray<string | Buffer>,
): Promise<boolean> {
  for (const p of parts) {
    if (res.destroyed || res.writableEnded) return false;
    sent.bytes += Buffer.byteLength(p);
    if (!res.write(p)) {
      const drained = await new Promise<boolean>((resolve) => {
        const onDrain = () => finish(true);
        const onClose = () => finish(false);
        const finish = (ok: boolean) => {
          res.off('drain', onDrain);
          res.off('close', onClose);
          resolve(ok);
        };
        res.on('drain', onDrain);
        res.on('close', onClose);
      });
      if (!drained) return false;
    }
  }
  return true;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
