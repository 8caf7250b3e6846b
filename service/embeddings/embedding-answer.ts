import type { EmbeddingUsage } from './types';

/** What an answer must hold. */
export interface AnswerShape {
  /** Vectors asked for (texts sent). */
  readonly count: number;
  /** Length of each. */
  readonly dimensions: number;
}

/** A parsed answer: the vectors in the order of the texts, and the usage the provider reported. */
export interface EmbeddingAnswer {
  readonly vectors: Float32Array[];
  /** Absent when the provider reported none, or a record that is not a count (`usageProblem`). */
  readonly usage?: EmbeddingUsage;
  readonly usageProblem?: string;
}

/**
 * An answer that is not the vectors asked for. Carries the usage when the answer was JSON that
 * reported one: the provider billed those tokens whatever it sent back.
 */
export class InvalidAnswer extends Error {
  constructor(
    message: string,
    readonly usage?: EmbeddingUsage,
  ) {
    super(message);
    this.name = 'InvalidAnswer';
  }
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/**
 * The usage of an embeddings answer when it makes sense: `prompt_tokens` a whole number from 0,
 * `total_tokens` one too and at least it (absent: equal to it). Anything else is refused whole,
 * with the reason; no record at all is neither.
 */
export function embeddingUsage(raw: unknown): { usage?: EmbeddingUsage; problem?: string } {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object') return { problem: `usage is ${JSON.stringify(raw)}, not an object` };
  const u = raw as Record<string, unknown>;
  if (!isCount(u.prompt_tokens))
    return {
      problem: `usage.prompt_tokens is ${JSON.stringify(u.prompt_tokens) ?? 'absent'}, not a whole number from 0`,
    };
  const prompt = u.prompt_tokens;
  if (u.total_tokens === undefined || u.total_tokens === null)
    return { usage: { prompt_tokens: prompt, total_tokens: prompt } };
  if (!isCount(u.total_tokens) || u.total_tokens < prompt)
    return {
      problem: `usage.total_tokens is ${JSON.stringify(u.total_tokens)}, not a whole number from prompt_tokens (${prompt})`,
    };
  return { usage: { prompt_tokens: prompt, total_tokens: u.total_tokens } };
}

/** A vector given as base64 of little-endian float32 (`encoding_format: base64`). */
function fromBase64(s: string, dimensions: number, at: number): Float32Array {
  const bytes = Buffer.from(s, 'base64');
  if (bytes.length !== dimensions * 4)
    throw new InvalidAnswer(`data[${at}].embedding holds ${bytes.length / 4} float32, not ${dimensions}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/** A vector given as JSON numbers. */
function fromNumbers(a: readonly unknown[], dimensions: number, at: number): Float32Array {
  if (a.length !== dimensions)
    throw new InvalidAnswer(`data[${at}].embedding has ${a.length} numbers, not ${dimensions}`);
  const out = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) {
    const v = a[i];
    if (typeof v !== 'number') throw new InvalidAnswer(`data[${at}].embedding[${i}] is not a number`);
    out[i] = v;
  }
  return out;
}

/**
 * The vectors of an OpenAI-compatible embeddings answer (`{data: [{index, embedding}], usage}`),
 * checked whole: as many as texts were sent, each index once (absent indexes: the order given),
 * each of `dimensions` numbers (an array, or a base64 string of float32), every number finite as
 * a float32 (a double past its range would be stored as Infinity). Throws `InvalidAnswer` for
 * anything else: a wrong answer is an error, never a stored vector.
 */
export function parseEmbeddingAnswer(text: string, shape: AnswerShape): EmbeddingAnswer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new InvalidAnswer('the answer is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidAnswer('the answer is not a JSON object');
  const { usage, problem } = embeddingUsage((body as { usage?: unknown }).usage);
  try {
    const data = (body as { data?: unknown }).data;
    if (!Array.isArray(data)) throw new InvalidAnswer('the answer has no data array');
    if (data.length !== shape.count)
      throw new InvalidAnswer(`the answer holds ${data.length} vectors for ${shape.count} texts`);
    const vectors = new Array<Float32Array | undefined>(shape.count);
    data.forEach((entry: unknown, at) => {
      if (typeof entry !== 'object' || entry === null) throw new InvalidAnswer(`data[${at}] is not an object`);
      const { index, embedding } = entry as { index?: unknown; embedding?: unknown };
      const slot = index === undefined ? at : index;
      if (typeof slot !== 'number' || !Number.isInteger(slot) || slot < 0 || slot >= shape.count)
        throw new InvalidAnswer(`data[${at}].index is ${JSON.stringify(index)}, not from 0 to ${shape.count - 1}`);
      if (vectors[slot]) throw new InvalidAnswer(`data[${at}].index ${slot} is given twice`);
      const v =
        typeof embedding === 'string'
          ? fromBase64(embedding, shape.dimensions, at)
          : Array.isArray(embedding)
            ? fromNumbers(embedding, shape.dimensions, at)
            : undefined;
      if (!v) throw new InvalidAnswer(`data[${at}].embedding is neither an array of numbers nor base64`);
      for (let i = 0; i < v.length; i++)
        if (!Number.isFinite(v[i])) throw new InvalidAnswer(`data[${at}].embedding[${i}] is not a finite float32`);
      vectors[slot] = v;
    });
    return {
      vectors: vectors as Float32Array[],
      ...(usage ? { usage } : {}),
      ...(problem ? { usageProblem: problem } : {}),
    };
  } catch (e) {
    if (e instanceof InvalidAnswer) throw new InvalidAnswer(e.message, usage);
    throw e;
  }
}
