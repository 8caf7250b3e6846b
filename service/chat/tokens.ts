import { countTokens } from 'gpt-tokenizer';
import type { ChatMessage, Usage } from './types';

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
  let tokens = 0;
  for (let pos = 0; pos < text.length; ) {
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
