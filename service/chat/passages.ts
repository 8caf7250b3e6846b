import type { Item } from '../content/item';
import { plainText } from '../content/plain-text';
import type { Analyzer } from '../search/analyzer';
import type { Passage } from './types';

/** Longest passage per source, characters. */
export const PASSAGE_CHARS = 800;

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * The part of an item a model gets as context: its summary, then the run of consecutive body
 * sentences (at most `maxChars` in all) holding the most distinct question terms; the start of
 * the body when nothing matches.
 */
export function passageFor(item: Item, question: string, analyzer: Analyzer, maxChars = PASSAGE_CHARS): Passage {
  const wanted = new Set(analyzer.analyze(question));
  const lead = item.summary ? `${item.summary}\n` : '';
  const budget = Math.max(100, maxChars - lead.length);
  const sents = sentences(plainText(item.body));
  const terms = sents.map((s) => new Set(analyzer.analyze(s)));
  let best = { start: 0, end: 0, score: -1 };
  for (let i = 0; i < sents.length; i++) {
    const seen = new Set<string>();
    let len = 0;
    let j = i;
    for (; j < sents.length && (j === i || len + sents[j].length + 1 <= budget); j++) {
      len += sents[j].length + 1;
      for (const t of terms[j]) if (wanted.has(t)) seen.add(t);
    }
    if (seen.size > best.score) best = { start: i, end: j, score: seen.size };
  }
  let text = sents.slice(best.start, best.end).join(' ');
  if (text.length > budget) text = `${text.slice(0, budget - 1).replace(/\s+\S*$/, '')}…`;
  return { id: item.id, title: item.title, text: `${lead}${text}`.trim() };
}
