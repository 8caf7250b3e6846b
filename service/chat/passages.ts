import type { Item } from '../content/item';
import { plainText } from '../content/plain-text';
import type { Analyzer } from '../search/analyzer';
import { distinctTerms } from '../search/query-plan';
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
  // The same distinct terms the search was run with (a repeated or endless question costs no more).
  const wanted = new Set(distinctTerms(analyzer.analyze(question)).kept);
  const lead = item.summary ? `${item.summary}\n` : '';
  const budget = Math.max(100, maxChars - lead.length);
  const sents = sentences(plainText(item.body));
  const terms = sents.map((s) => [...new Set(analyzer.analyze(s))].filter((t) => wanted.has(t)));
  // A sliding window: for each start i, the longest run [i, j) within the budget (at least one
  // sentence); j never moves back, so a body of many tiny sentences costs linear time.
  const inWindow = new Map<string, number>();
  const add = (k: number, d: number) => {
    for (const t of terms[k]) {
      const n = (inWindow.get(t) ?? 0) + d;
      if (n) inWindow.set(t, n);
      else inWindow.delete(t);
    }
  };
  let best = { start: 0, end: 0, score: -1 };
  let j = 0;
  let len = 0;
  for (let i = 0; i < sents.length; i++) {
    if (j < i + 1) {
      j = i + 1;
      len = sents[i].length + 1;
      add(i, 1);
    }
    while (j < sents.length && len + sents[j].length + 1 <= budget) {
      len += sents[j].length + 1;
      add(j, 1);
      j += 1;
    }
    if (inWindow.size > best.score) best = { start: i, end: j, score: inWindow.size };
    len -= sents[i].length + 1;
    add(i, -1);
  }
  let text = sents.slice(best.start, best.end).join(' ');
  if (text.length > budget) text = `${text.slice(0, budget - 1).replace(/\s+\S*$/, '')}…`;
  return { id: item.id, title: item.title, text: `${lead}${text}`.trim() };
}
