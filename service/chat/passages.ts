import type { Item } from '../content/item';
import { plainTextOf } from '../content/plain-text';
import { cutAtWord, PASSAGE_CHARS, sentences } from '../content/sentences';
import type { Analyzer } from '../search/analysis/analyzer';
import { distinctTerms } from '../search/query/query-plan';
import type { Passage } from './types';

/**
 * How much of an item's plain text one passage reads, whatever the item's length (issue 29): a
 * chat's work is bounded by the passages it returns.
 */
export const PASSAGE_SCAN = {
  /** The first word holding a question term must start within this many characters. */
  firstMatchWithin: 16_384,
  /** Sentences are weighed up to this far past that word (or from the start, without one). */
  afterFirstMatch: 8_192,
} as const;

/**
 * The stretch of `text` a passage is chosen from: up to `afterFirstMatch` characters past the
 * first word holding a wanted term (or past the start, when none does within
 * `firstMatchWithin`), ending at a sentence break when one is near. All of `text` when it is
 * shorter, so a normal item's passage is what it always was.
 */
function scanned(text: string, wanted: ReadonlySet<string>, analyzer: Analyzer): string {
  if (text.length <= PASSAGE_SCAN.afterFirstMatch) return text;
  let first = 0;
  for (const span of analyzer.spansLazily(text)) {
    if (span.start >= PASSAGE_SCAN.firstMatchWithin) break;
    const term = analyzer.term(span.token);
    if (term && wanted.has(term)) {
      first = span.start;
      break;
    }
  }
  const end = first + PASSAGE_SCAN.afterFirstMatch;
  if (end >= text.length) return text;
  // Cut after the last sentence end in the final stretch (a sentence is not cut in two).
  const tail = text.slice(end - 1_000, end);
  const brk = Math.max(tail.lastIndexOf('\n'), tail.lastIndexOf('. '), tail.lastIndexOf('! '), tail.lastIndexOf('? '));
  return text.slice(0, brk < 0 ? end : end - 1_000 + brk + 1);
}

/**
 * The part of an item a model gets as context: its summary, then the run of consecutive body
 * sentences (at most `maxChars` in all) holding the most distinct question terms (with
 * `synonyms`, the index terms of their synonyms); the start of the body when nothing matches. Reads the item's kept plain text (`plainTextOf`), and only the
 * stretch of it `PASSAGE_SCAN` allows.
 */
export function passageFor(
  item: Item,
  question: string,
  analyzer: Analyzer,
  maxChars = PASSAGE_CHARS,
  synonyms: readonly string[] = [],
): Passage {
  // The same distinct terms the search was run with (a repeated or endless question costs no more).
  const wanted = new Set([...distinctTerms(analyzer.analyze(question)).kept, ...synonyms]);
  const lead = item.summary ? `${item.summary}\n` : '';
  const budget = Math.max(100, maxChars - lead.length);
  const sents = sentences(scanned(plainTextOf(item), wanted, analyzer));
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
  const text = cutAtWord(sents.slice(best.start, best.end).join(' '), budget);
  return { id: item.id, title: item.title, text: `${lead}${text}`.trim() };
}
