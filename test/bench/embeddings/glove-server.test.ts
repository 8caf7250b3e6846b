import pino from 'pino';
import { OpenAiEmbedder } from '../../../service/embeddings';
import {
  embedText,
  startGloveServer,
  words,
  type GloveServer,
  type WordVectors,
} from '../../../bench/embeddings/glove-server';

/** Five words of 4 dimensions, most frequent first (the package's order); "the" is a stopword. */
function tinyVectors(): WordVectors {
  const table: [string, number[]][] = [
    ['the', [0, 0, 0, 100]],
    ['car', [1, 0, 0, 0]],
    ['automobile', [0.9, 0.1, 0, 0]],
    ['plasma', [0, 1, 0, 0]],
    ['physics', [0, 0, 1, 0]],
    ['x-ray', [0, 1, 1, 0]],
  ];
  return {
    dims: 4,
    rows: new Map(table.map(([w], i) => [w, i])),
    data: Float32Array.from(table.flatMap(([, v]) => v)),
  };
}

const norm = (v: ArrayLike<number>) => Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0));
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((s, x, i) => s + x * b[i], 0);

describe('the GloVe bench embedder (bench/embeddings/glove-server.ts)', () => {
  let server: GloveServer;
  beforeAll(async () => {
    server = await startGloveServer({ vectors: tinyVectors() });
  });
  afterAll(() => server.close());

  const embedder = (tokens: { n: number }, encoding: 'float' | 'base64' = 'float') =>
    new OpenAiEmbedder({
      baseUrl: server.baseUrl,
      model: 'glove',
      dimensions: 4,
      encoding,
      batchSize: 2,
      timeoutMs: 10_000,
      maxRetries: 0,
      retryMaxWaitMs: 0,
      tokens: { addTokens: (n) => void (tokens.n += n) },
      logger: pino({ level: 'silent' }),
    });

  it("answers the service's client: mean of known words, stopwords out, length 1, every word billed", async () => {
    const tokens = { n: 0 };
    const texts = ['The car', 'an Automobile', 'plasma physics', 'zzz qqq', 'X-ray'];
    const { vectors, usage } = await embedder(tokens).embed(texts);
    expect(vectors).toHaveLength(5);
    for (const v of vectors) expect(norm(v)).toBeCloseTo(1, 5);
    // "the" would dominate the car's vector if it were averaged in.
    expect(Array.from(vectors[0])).toEqual([1, 0, 0, 0]);
    expect(dot(vectors[0], vectors[1])).toBeGreaterThan(0.99);
    expect(Array.from(vectors[2]).map((x) => +x.toFixed(5))).toEqual(
      [0, 0.70711, 0.70711, 0].map((x) => +x.toFixed(5)),
    );
    // A hyphenated word GloVe knows is one word.
    expect(dot(vectors[4], vectors[2])).toBeCloseTo(1, 5);
    // Every word is billed, stopwords and unknown words too: 2 + 2 + 2 + 2 + 1.
    expect(usage.total_tokens).toBe(9);
    expect(tokens.n).toBe(9);
    expect(server.stats.unknownOnly).toBe(1);
  });

  it('gives a text with no known word a unit vector of its own, the same each time', async () => {
    const [a, b, c] = (await embedder({ n: 0 }).embed(['zzz qqq', 'zzz qqq', 'yyy'])).vectors;
    expect(norm(a)).toBeCloseTo(1, 5);
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(Array.from(a)).not.toEqual(Array.from(c));
  });

  it('answers base64 when asked, the same vectors', async () => {
    const texts = ['car physics', 'plasma'];
    const asFloat = await embedder({ n: 0 }).embed(texts);
    const asBase64 = await embedder({ n: 0 }, 'base64').embed(texts);
    expect(asBase64.vectors.map((v) => Array.from(v))).toEqual(asFloat.vectors.map((v) => Array.from(v)));
  });

  it('refuses an empty input with 400 naming it, and other routes with 404', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${server.baseUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
    const bad = await post('/embeddings', { model: 'glove', input: [] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('input');
    expect((await post('/chat/completions', {})).status).toBe(404);
  });

  it('weighs frequent words down under SIF', () => {
    const wv = tinyVectors();
    // "car" is the most frequent known word here (rank 1), "physics" rank 4: SIF leans to physics.
    const mean = embedText(wv, 'car physics').vector;
    const sif = embedText(wv, 'car physics', 'sif').vector;
    expect(mean[0]).toBeCloseTo(mean[2], 5);
    expect(sif[2]).toBeGreaterThan(sif[0]);
  });

  it('cuts words lower-cased, keeping inner hyphens and apostrophes', () => {
    expect(words("The X-ray's  glow, don’t 42nd")).toEqual(['the', "x-ray's", 'glow', "don't", '42nd']);
  });
});
