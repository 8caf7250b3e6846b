import type { ServerResponse } from 'node:http';
import { Analyzer } from '../../service/search/analysis/analyzer';

/** Dimensions of the fake's vectors when the request names none (`FakeOpenAi.embeddingDimensions`). */
export const FAKE_EMBEDDING_DIMENSIONS = 64;

/**
 * Words the fake embeds alike, one group a line: the first word stands for the group. Small on
 * purpose: enough for tests where a query and an item share no word but mean the same.
 */
export const FAKE_SYNONYMS: readonly (readonly string[])[] = [
  ['car', 'automobile', 'vehicle', 'auto', 'motorcar'],
  ['film', 'movie', 'picture', 'cinema'],
  ['buy', 'purchase', 'acquire'],
  ['big', 'large', 'huge', 'enormous'],
  ['doctor', 'physician', 'medic'],
  ['child', 'kid', 'youngster'],
  ['fast', 'quick', 'rapid', 'speedy'],
  ['begin', 'start', 'commence'],
  ['house', 'home', 'dwelling'],
  ['sea', 'ocean'],
];

const analyzer = new Analyzer();

/** Stem → the stem of its group's first word. */
const CANONICAL: ReadonlyMap<string, string> = new Map(
  FAKE_SYNONYMS.flatMap((group) => {
    const head = analyzer.analyze(group[0])[0];
    return group.flatMap((w) => analyzer.analyze(w).map((stem): [string, string] => [stem, head]));
  }),
);

function fnv1a(s: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The fake's vector of `text`: a hashed bag of its analyzed words (the service's analyzer:
 * stemmed, stopwords out), each word standing for its synonym group (`FAKE_SYNONYMS`), added at
 * four hashed positions with hashed signs, then scaled to length 1. Deterministic; texts sharing
 * words or synonyms point the same way ("car" and "automobile" give the same vector), unrelated
 * ones are near orthogonal. A text with no word gives a fixed unit vector.
 */
export function fakeEmbedding(text: string, dimensions: number): Float32Array {
  const v = new Float64Array(dimensions);
  for (const term of analyzer.analyze(text)) {
    const word = CANONICAL.get(term) ?? term;
    for (let k = 0; k < 4; k++) {
      const h = fnv1a(word, 0x811c9dc5 + k);
      v[h % dimensions] += h & 0x80000000 ? -1 : 1;
    }
  }
  let norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
  if (norm === 0) {
    v[0] = 1;
    norm = 1;
  }
  return Float32Array.from(v, (x) => x / norm);
}

/** Tokens the fake bills for `texts`: their whitespace-separated words (at least one a text). */
export function fakeEmbeddingTokens(texts: readonly string[]): number {
  return texts.reduce((n, t) => n + Math.max(1, t.split(/\s+/).filter(Boolean).length), 0);
}

/** One scripted answer of the fake's `POST /v1/embeddings`. */
export type FakeEmbeddingReply =
  /**
   * The vectors of the inputs (base64 when the request asks for it), with usage. Failure modes:
   * `delayMs` before answering (a slow provider), `dimensions` other than asked (a wrong
   * dimension), `drop` entries left out, `nonFinite` a number past float32's range in the first
   * vector, `usage` replaced (`null`: none).
   */
  | {
      kind: 'vectors';
      delayMs?: number;
      dimensions?: number;
      drop?: number;
      nonFinite?: boolean;
      usage?: Record<string, unknown> | null;
    }
  /** An HTTP error status, e.g. 429 with `{'retry-after': '1'}`, 500, 503. */
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** A 200 whose body never ends: a JSON start, then digits with backpressure until the connection closes. */
  | { kind: 'huge' }
  /** A 200 that sends one space every `everyMs`, never finishing (a provider that trickles). */
  | { kind: 'trickle'; everyMs: number }
  /** Accepts the request and never answers. */
  | { kind: 'hang' }
  /** Closes the connection without answering. */
  | { kind: 'reset' };

/** What an embeddings request asked, as the fake read it. */
interface EmbeddingsRequestBody {
  input?: unknown;
  model?: unknown;
  dimensions?: unknown;
  encoding_format?: unknown;
}

/** Writes `chunk` again and again with backpressure until the connection closes; counts the bytes. */
async function flood(res: ServerResponse, chunk: Buffer, sent: { bytes: number }): Promise<void> {
  const closed = new Promise<false>((resolve) => res.once('close', () => resolve(false)));
  while (!res.destroyed && !res.writableEnded) {
    sent.bytes += chunk.length;
    if (!res.write(chunk)) {
      const drained = new Promise<true>((resolve) => res.once('drain', () => resolve(true)));
      if (!(await Promise.race([drained, closed]))) return;
    }
  }
}

/**
 * Answers one `POST /v1/embeddings` by `reply`; returns the tokens billed (the usage reported,
 * 0 when none). The socket is destroyed for `reset`; `hang` leaves the request open.
 */
export async function answerEmbeddings(
  reply: FakeEmbeddingReply,
  raw: Record<string, unknown>,
  res: ServerResponse,
  sent: { bytes: number },
  defaultDimensions = FAKE_EMBEDDING_DIMENSIONS,
): Promise<number> {
  const body = raw as EmbeddingsRequestBody;
  const inputs = (Array.isArray(body.input) ? body.input : [body.input]).map(String);
  switch (reply.kind) {
    case 'hang':
      return 0;
    case 'reset':
      res.socket?.destroy();
      return 0;
    case 'status':
      res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
      res.end(reply.body ?? JSON.stringify({ error: { message: `fake error ${reply.status}` } }));
      return 0;
    case 'huge':
      res.writeHead(200, { 'content-type': 'application/json' });
      sent.bytes += 30;
      res.write('{"data":[{"index":0,"embedding":[');
      await flood(res, Buffer.from('0.1234567,'.repeat(6554)), sent);
      return 0;
    case 'trickle':
      res.writeHead(200, { 'content-type': 'application/json' });
      while (!res.destroyed && !res.writableEnded) {
        res.write(' ');
        sent.bytes += 1;
        await new Promise((r) => setTimeout(r, reply.everyMs));
      }
      return 0;
    case 'vectors': {
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed) return 0;
      const asked = typeof body.dimensions === 'number' ? body.dimensions : defaultDimensions;
      const dims = reply.dimensions ?? asked;
      const base64 = body.encoding_format === 'base64';
      const tokens = fakeEmbeddingTokens(inputs);
      const usage = reply.usage === undefined ? { prompt_tokens: tokens, total_tokens: tokens } : reply.usage;
      const data = inputs.slice(0, inputs.length - (reply.drop ?? 0)).map((text, index) => {
        const v = fakeEmbedding(text, dims);
        const numbers = Array.from(v);
        if (reply.nonFinite && index === 0) numbers[0] = 1e39;
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(Float32Array.from(numbers).buffer).toString('base64') : numbers,
        };
      });
      const text = JSON.stringify({
        object: 'list',
        data,
        model: String(body.model ?? 'fake-embed'),
        ...(usage ? { usage } : {}),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      sent.bytes += Buffer.byteLength(text);
      const billed = usage && typeof usage.total_tokens === 'number' ? usage.total_tokens : 0;
      return billed;
    }
  }
}
