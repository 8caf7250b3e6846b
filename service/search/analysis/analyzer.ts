import stem from 'wink-porter2-stemmer';
import { ENGLISH_STOPWORDS } from './stopwords';

/** A word of a text and where it is (for highlighting). */
export interface TokenSpan {
  /** Lower-cased, accents removed. */
  readonly token: string;
  readonly start: number;
  readonly end: number;
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;
const MAX_TOKEN = 64;
const STEM_CACHE_LIMIT = 100_000;

/** Characters per call of the analyzer while scanning. */
const CHUNK = 1_024;
/** How far past a chunk's nominal end a place between two words is looked for. */
const BOUNDARY_SEARCH = 256;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** A UTF-16 unit that can be part of a word (surrogates counted in: they may be letters). */
function wordish(c: number): boolean {
  return (
    (c >= 0xd800 && c <= 0xdfff) ||
    c === 0x27 ||
    c === 0x2019 ||
    (c > 0x2f && LETTER_OR_DIGIT.test(String.fromCharCode(c)))
  );
}

/** True when no word can end at `i` (the units on both sides can both be part of one). */
function insideWord(text: string, i: number): boolean {
  return wordish(text.charCodeAt(i - 1)) && wordish(text.charCodeAt(i));
}

/**
 * English text analysis shared by indexing, querying, highlighting and query expansion: words
 * are runs of letters and digits (inner apostrophes kept), lower-cased with accents removed;
 * stopwords and one-letter words are dropped; the rest is stemmed with Porter2 (Snowball
 * English), so "measurements", "measuring" and "measure" meet.
 */
export class Analyzer {
  private readonly stems = new Map<string, string>();

  /** Words of `text` with their offsets. */
  spans(text: string): TokenSpan[] {
    const out: TokenSpan[] = [];
    for (const m of text.matchAll(WORD)) {
      out.push({ token: fold(m[0]), start: m.index, end: m.index + m[0].length });
    }
    return out;
  }

  /**
   * The words of `text` from its start (what `spans(text)` gives), a chunk at a time, so
   * that a caller who stops early has paid only for what it read. A chunk ends between two words;
   * when none is found near its end (a run of `BOUNDARY_SEARCH` word characters), the word it cut
   * is read again whole by the next chunk, or dropped if it is longer than a chunk (no index term
   * is: the analyzer drops words over 64 characters).
   */
  *spansLazily(text: string): Generator<TokenSpan> {
    const n = text.length;
    let pos = 0;
    let skipAt = -1;
    while (pos < n) {
      let cut = Math.min(n, pos + CHUNK);
      const limit = Math.min(n, cut + BOUNDARY_SEARCH);
      while (cut < limit && insideWord(text, cut)) cut++;
      const spans = this.spans(text.slice(pos, cut));
      let next = cut;
      let giant = -1;
      if (cut < n && insideWord(text, cut) && spans.length) {
        // A word across the cut ends, in this chunk, at the cut or just before it (an apostrophe).
        const last = spans[spans.length - 1];
        if (pos + last.end >= cut - 1) {
          spans.pop();
          if (last.start > 0) next = pos + last.start;
          else giant = cut;
        }
      }
      for (const s of spans) {
        if (pos + s.start !== skipAt) yield { token: s.token, start: pos + s.start, end: pos + s.end };
      }
      skipAt = giant;
      pos = next;
    }
  }

  /** Words of `text`, folded, not yet filtered or stemmed. */
  tokenize(text: string): string[] {
    const out: string[] = [];
    for (const m of text.matchAll(WORD)) out.push(fold(m[0]));
    return out;
  }

  /** The index term of one folded word, or null for stopwords and noise. */
  term(token: string): string | null {
    // One look-up per token in the common case: dropped tokens are cached too, as ''.
    let s = this.stems.get(token);
    if (s === undefined) {
      if ((token.length < 2 && !/^\d$/.test(token)) || token.length > MAX_TOKEN || ENGLISH_STOPWORDS.has(token)) s = '';
      else {
        const bare = token.replace(/['’]s$/, '').replace(/['’]/g, '');
        s = /^\d+$/.test(bare) ? bare : stem(bare);
      }
      if (this.stems.size >= STEM_CACHE_LIMIT) this.stems.clear();
      this.stems.set(token, s);
    }
    return s || null;
  }

  /** Index terms of `text`, in order, repeats kept. */
  analyze(text: string): string[] {
    const out: string[] = [];
    for (const t of this.tokenize(text)) {
      const term = this.term(t);
      if (term) out.push(term);
    }
    return out;
  }

  /**
   * `analyze` for very large texts: the same terms, with `pause()` awaited every `every` words,
   * so a caller can hand the event loop to others in between (a 1 MB body is ~170 ms of work).
   */
  async analyzeInSlices(text: string, pause: () => Promise<void>, every = 2048): Promise<string[]> {
    const out: string[] = [];
    let n = 0;
    for (const m of text.matchAll(WORD)) {
      const term = this.term(fold(m[0]));
      if (term) out.push(term);
      if (++n % every === 0) await pause();
    }
    return out;
  }
}

function fold(word: string): string {
  const lower = word.toLowerCase();
  // Only strings with non-ASCII letters pay for normalization.
  return /[^\x00-\x7f]/.test(lower)
    ? lower
        .normalize('NFKD')
        .replace(/[\u0300-\u036f]/g, '')
        .replace(/’/g, "'")
    : lower;
}
