import { countTokens } from 'gpt-tokenizer';
import type { ChatMessage, Usage } from './types';

/**
 * Tokens of a text with the o200k_base encoding (gpt-4o family). Other models' tokenizers
 * differ by a few percent; this is the count used when a provider reports none.
 */
export function textTokens(text: string): number {
  return text ? countTokens(text) : 0;
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
