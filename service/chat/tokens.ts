import type * as GptTokenizer from 'gpt-tokenizer';
import type { ChatMessage, Usage } from './types';

let counter: typeof GptTokenizer.countTokens | undefined;

/**
 * The tokenizer, loaded on first use: evaluating gpt-tokenizer's o200k_base table is one
 * synchronous step of about half a second. `main` loads it before the service listens, so no
 * request pays it there; a process that never counts tokens (most test suites, the tools) never
 * loads it.
 */
export function loadTokenizer(): typeof GptTokenizer.countTokens {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when first needed, see above
  counter ??= (require('gpt-tokenizer') as typeof GptTokenizer).countTokens;
  return counter;
}

/** Longest piece of text counted at once, characters. */
const PIECE_CHARS = 256;
/** Special tokens (`<|endoftext|>`…) in user text are counted as the text they are, not refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Tokens of a text with the o200k_base encoding (gpt-4o family). Other models' tokenizers
 * differ by a few percent; this is the count used when a provider reports none.
 *
 * Counted in pieces of at most `PIECE_CHARS` (issue 29): the tokenizer's byte-pair merging is
 * quadratic in the length of one pre-token, and 8,000 letters or spaces in a row are one (20
 * history turns of those took a second). A piece ends just before a space that follows a
 * non-space, where no pre-token of the encoding crosses, so ordinary text counts exactly as in
 * one call; a run with no such place (a very long word, unspaced CJK) is cut at `PIECE_CHARS`,
 * which can add a token per cut.
 */
export function textTokens(text: string): number {
  const countTokens = loadTokenizer();
  let tokens = 0;
  for (let pos = 0; pos < text.length;) {
    let cut = Math.min(text.length, pos + PIECE_CHARS);
    if (cut < text.length) {
      let c = cut;
      while (c > pos + 1 && !(text[c] === ' ' && !/\s/.test(text[c - 1]))) c--;
      if (c > pos + 1) cut = c;
    }
    tokens += countTokens(text.slice(pos, cut), AS_TEXT);
    pos = cut;
  }
  return tokens;
}

/** Prompt tokens of a chat request: content plus OpenAI's per-message framing (≈3 + 1 per message, 3 to prime the reply). */
export function promptTokens(messages: readonly ChatMessage[]): number {
  return messages.reduce((n, m) => n + 4 + textTokens(m.content), 3);
}

/** A usage record counted locally. */
export function countedUsage(messages: readonly ChatMessage[], completion: string): Usage {
  const prompt = promptTokens(messages);
  const completionTokens = textTokens(completion);
  return { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens };
}

/**
 * Most characters of an answer kept for its token estimate (`AnswerText`): an answer up to this
 * long is counted exactly, a longer one at the kept part's tokens per character, so neither the
 * memory nor the tokenizer's time of an estimate grows with what a provider sends.
 */
export const ESTIMATE_SAMPLE_CHARS = 64 * 1024;

/** The text of an answer as it arrives, kept only as far as its token estimate needs. */
export class AnswerText {
  private sample = '';
  private total = 0;

  /** Adds a piece of the answer. */
  add(text: string): void {
    this.total += text.length;
    const room = ESTIMATE_SAMPLE_CHARS - this.sample.length;
    if (room > 0) this.sample += text.length > room ? text.slice(0, room) : text;
  }

  /** Characters (UTF-16 code units) of the whole answer so far. */
  get chars(): number {
    return this.total;
  }

  /** Tokens of the answer: exact up to `ESTIMATE_SAMPLE_CHARS`, scaled from the kept part past it. */
  tokens(): number {
    const counted = textTokens(this.sample);
    if (this.total <= this.sample.length) return counted;
    return Math.ceil((counted * this.total) / this.sample.length);
  }
}

/** A usage record estimated locally from the prompt and the answer received (all of it or a part). */
export function estimatedUsage(messages: readonly ChatMessage[], answer: AnswerText): Usage {
  const prompt = promptTokens(messages);
  const completion = answer.tokens();
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** A provider's usage record judged: the record when it is one, else what is wrong with it. */
export interface ReportedUsage {
  /** The counts, each a whole number from 0, `total_tokens` at least the sum of the other two. */
  readonly usage?: Usage;
  /** Why a record that was sent is not taken (a negative or fractional count…). */
  readonly problem?: string;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/**
 * The usage a provider reported, when it makes sense: `prompt_tokens` and `completion_tokens`
 * whole numbers from 0, `total_tokens` one too and at least their sum (absent: their sum;
 * providers that count reasoning or cached tokens apart may report more). Anything else (a
 * negative count, a fraction, a string, a total below the parts) is refused whole, with the
 * reason: such a record would reach a client's `Usage` (minimum 0) and the tokens counter, so the
 * caller estimates instead. No record at all (`null`, absent) is neither usage nor a problem.
 */
export function reportedUsage(raw: unknown): ReportedUsage {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object') return { problem: `usage is ${JSON.stringify(raw)}, not an object` };
  const u = raw as Record<string, unknown>;
  for (const field of ['prompt_tokens', 'completion_tokens'] as const) {
    if (!isCount(u[field]))
      return { problem: `usage.${field} is ${JSON.stringify(u[field]) ?? 'absent'}, not a whole number from 0` };
  }
  const prompt = u.prompt_tokens as number;
  const completion = u.completion_tokens as number;
  const sum = prompt + completion;
  if (u.total_tokens === undefined || u.total_tokens === null)
    return { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: sum } };
  if (!isCount(u.total_tokens) || u.total_tokens < sum) {
    return {
      problem: `usage.total_tokens is ${JSON.stringify(u.total_tokens)}, not a whole number from prompt_tokens + completion_tokens (${sum})`,
    };
  }
  return { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: u.total_tokens } };
}
