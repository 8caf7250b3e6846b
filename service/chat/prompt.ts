import type { ChatMessage, Passage } from './types';

/** The instructions every model gets. */
export const SYSTEM_PROMPT = [
  "You answer questions about this site's articles, projects and experiences.",
  'Use only the numbered sources below. Cite every claim with its source number in brackets, e.g. [1] or [2][3].',
  "If the sources do not contain the answer, say that the site's content does not cover it. Be concise.",
].join(' ');

/**
 * The messages sent to a model: the system prompt with the numbered passages, the earlier
 * turns, then the question.
 */
export function buildMessages(question: string, history: readonly ChatMessage[], passages: readonly Passage[]): ChatMessage[] {
  const sources = passages.length
    ? passages.map((p, i) => `[${i + 1}] ${p.title}\n${p.text}`).join('\n\n')
    : '(no matching content was found)';
  return [
    { role: 'system', content: `${SYSTEM_PROMPT}\n\nSources:\n\n${sources}` },
    ...history.filter((m) => m.role !== 'system'),
    { role: 'user', content: question },
  ];
}
