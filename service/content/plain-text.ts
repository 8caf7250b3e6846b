import type { Item } from './item';
import { isLineEnd, isSpace } from './char-class';

/**
 * Markdown (or plain text) to the plain text that is indexed and quoted in snippets: markup,
 * link targets and HTML tags go, the words stay (code included: people search for identifiers).
 *
 * Linear time in the input, whatever it holds (issue 29). The passes are those of the regular
 * expression chain this replaced, in the same order and with the same output on every input
 * (a differential test compares them on generated text); the ones that backtracked over
 * unbounded runs are single-pass scanners here:
 *
 * - comments, links and images, autolinks and HTML tags look for their closing `-->`, `]`, `)`
 *   or `>` with a search that only moves forward (a `[` that is never closed no longer sends every
 *   later `[` to the end of the text);
 * - code fence lines, reference definitions and horizontal rules start at a line start after any
 *   whitespace (`^\s*` spanned newlines), so one scan of a whitespace run decides every line start
 *   inside it;
 * - the final clean-up (`|` to a space, runs of spaces and tabs to one space, a whitespace run
 *   holding a newline to that newline) treats each run once.
 *
 * The remaining regular expressions are linear: no quantified part of them can be retried from
 * more than a bounded number of starting points (see the comment on each).
 */
export function plainText(markdown: string): string {
  let s = markdown;
  for (const pass of PASSES) s = pass(s);
  return s;
}

/**
 * `plainText`'s passes, in order: each is linear in its input, and `plainTextOfInSteps` runs
 * them a step each.
 */
const PASSES: ReadonlyArray<(s: string) => string> = [
  (s) => s.replace(/\r\n?/g, '\n'),
  removeComments,
  removeFenceLines,
  (s) => replaceBracketed(s, '![', '(', ')'),
  (s) => replaceBracketed(s, '[', '(', ')'),
  (s) => replaceBracketed(s, '[', '[', ']'),
  removeReferenceDefinitions,
  removeAutolinks,
  removeTags,
  // Line-start markers. `\s{0,3}` reaches at most three characters back, so a run of `>` or
  // digits is tried from at most four line starts.
  (s) => s.replace(/^\s{0,3}(#{1,6}|>+|[-*+]|\d+[.)])\s+/gm, ''),
  removeRules,
  (s) => s.replace(/(\*\*|__|~~|`+)/g, ''),
  // Emphasis: the lazy part cannot cross a `*` or `_`, and a try starts only before one, so the
  // stretches tried do not overlap.
  (s) => s.replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/gm, '$1$2'),
  (s) => s.replace(/&(nbsp|amp|lt|gt|quot|#39);/g, (_m, e: string) => ENTITIES[e] ?? ' '),
  (s) => cleanWhitespace(s).trim(),
];

const ENTITIES: Readonly<Record<string, string>> = { nbsp: ' ', amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

/** The end of the run of whitespace starting at `i`. */
function spaceEnd(s: string, i: number): number {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
}

/** Line terminators (`isLineEnd`), for `lineEnd`'s search (its `lastIndex` set before each). */
const LINE_END = /[\n\r\u2028\u2029]/g;

/**
 * The first line terminator at or after `i`, or the length. A regular expression's search, not a
 * loop over `charCodeAt`: a text of one long line (1 MB of prose) is scanned by three passes up to
 * their line ends, and the loop was most of `plainText`'s time there.
 */
function lineEnd(s: string, i: number): number {
  LINE_END.lastIndex = i;
  return LINE_END.exec(s)?.index ?? Math.max(i, s.length);
}

/**
 * `indexOf(ch, from)` for calls whose `from` never decreases: the last answer is reused while it
 * is still ahead, so a text is searched once however often it is asked.
 */
function forwardSearch(s: string, ch: string): (from: number) => number {
  let found = -2;
  return (from) => {
    if (found === -1 || found >= from) return found;
    found = s.indexOf(ch, from);
    return found;
  };
}

/** `/<!--[\s\S]*?-->/g` → ' '. Once no `-->` follows, no later `<!--` can close either. */
function removeComments(s: string): string {
  let out = '';
  let copied = 0;
  let open = s.indexOf('<!--');
  while (open >= 0) {
    const close = s.indexOf('-->', open + 4);
    if (close < 0) break;
    out += `${s.slice(copied, open)} `;
    copied = close + 3;
    open = s.indexOf('<!--', copied);
  }
  return copied ? out + s.slice(copied) : s;
}

/**
 * `/^\s*(```|~~~).*$/gm` → ' ': a fence line, with the blank lines before it. Every line start
 * inside one whitespace run reaches the same first non-space character, so a run that does not
 * lead to a fence is passed over whole.
 */
function removeFenceLines(s: string): string {
  let out = '';
  let copied = 0;
  for (let p = 0; p <= s.length;) {
    const q = spaceEnd(s, p);
    if (s.startsWith('```', q) || s.startsWith('~~~', q)) {
      const e = lineEnd(s, q + 3);
      out += `${s.slice(copied, p)} `;
      copied = e;
      p = e + 1;
    } else {
      p = lineEnd(s, q) + 1;
    }
  }
  return copied ? out + s.slice(copied) : s;
}

/**
 * `open` + `([^\]]*)\]` + `opener` + `[^closer]*` + `closer` → the bracketed text ($1): inline
 * links and images (`[text](target)`, `![alt](src)`) and reference links (`[text][ref]`). The
 * closing `]` of every try is the first one after it, found by a forward-only search, as is the
 * closer; once either is missing, no later try can match.
 */
function replaceBracketed(s: string, open: '![' | '[', opener: '(' | '[', closer: ')' | ']'): string {
  const nextBracket = forwardSearch(s, ']');
  const nextCloser = closer === ']' ? nextBracket : forwardSearch(s, closer);
  let out = '';
  let copied = 0;
  let i = s.indexOf(open);
  while (i >= 0) {
    const j = nextBracket(i + open.length);
    if (j < 0) break;
    if (s[j + 1] === opener) {
      const k = nextCloser(j + 2);
      if (k < 0) break;
      out += s.slice(copied, i) + s.slice(i + open.length, j);
      copied = k + 1;
      i = s.indexOf(open, copied);
    } else {
      i = s.indexOf(open, i + 1);
    }
  }
  return copied ? out + s.slice(copied) : s;
}

/**
 * `/^\s*\[[^\]]+\]:\s+\S+.*$/gm` → ' ': reference definitions (`[id]: https://…`). Line starts
 * inside one whitespace run share their outcome; the `]` is found by a forward-only search, and
 * the whitespace and line after it are measured once per `]`.
 */
function removeReferenceDefinitions(s: string): string {
  const nextBracket = forwardSearch(s, ']');
  let measuredFor = -1;
  let defEnd = -1;
  let out = '';
  let copied = 0;
  for (let p = 0; p <= s.length;) {
    const q = spaceEnd(s, p);
    if (s[q] === '[') {
      const j = nextBracket(q + 1);
      if (j < 0) break;
      if (j > q + 1 && s[j + 1] === ':') {
        if (measuredFor !== j) {
          measuredFor = j;
          const r = spaceEnd(s, j + 2);
          defEnd = r > j + 2 && r < s.length ? lineEnd(s, r) : -1;
        }
        if (defEnd >= 0) {
          out += `${s.slice(copied, p)} `;
          copied = defEnd;
          p = defEnd + 1;
          continue;
        }
      }
    }
    p = lineEnd(s, q) + 1;
  }
  return copied ? out + s.slice(copied) : s;
}

/** `/<https?:\/\/[^>\s]+>/g` → ' '. The end of the address is found by a forward-only scan. */
function removeAutolinks(s: string): string {
  let scanned = -1;
  let stop = -1;
  const stopAt = (from: number): number => {
    if (stop >= from) return stop;
    let i = Math.max(from, scanned);
    while (i < s.length && s[i] !== '>' && !isSpace(s.charCodeAt(i))) i++;
    scanned = i;
    stop = i;
    return i;
  };
  let out = '';
  let copied = 0;
  let i = s.indexOf('<http');
  while (i >= 0) {
    const k = s[i + 5] === 's' ? i + 6 : i + 5;
    if (s.startsWith('://', k)) {
      const r = stopAt(k + 3);
      if (r > k + 3 && s[r] === '>') {
        out += `${s.slice(copied, i)} `;
        copied = r + 1;
        i = s.indexOf('<http', copied);
        continue;
      }
    }
    i = s.indexOf('<http', i + 1);
  }
  return copied ? out + s.slice(copied) : s;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** `/<\/?[a-zA-Z][^>]*>/g` → ' ': HTML tags. The closing `>` is found by a forward-only search. */
function removeTags(s: string): string {
  const nextGt = forwardSearch(s, '>');
  let out = '';
  let copied = 0;
  let i = s.indexOf('<');
  while (i >= 0) {
    const k = s[i + 1] === '/' ? i + 2 : i + 1;
    if (isAsciiLetter(s.charCodeAt(k))) {
      const j = nextGt(k + 1);
      if (j < 0) break;
      out += `${s.slice(copied, i)} `;
      copied = j + 1;
      i = s.indexOf('<', copied);
    } else {
      i = s.indexOf('<', i + 1);
    }
  }
  return copied ? out + s.slice(copied) : s;
}

function isRuleMark(c: number): boolean {
  return c === 0x2d || c === 0x2a || c === 0x5f; // - * _
}

/**
 * `/^\s*([-*_]\s*){3,}$/gm` → ' ': horizontal rules (with the blank lines before them). From a
 * line start, whitespace then a sequence of `-`, `*`, `_` and whitespace; it matches when the
 * sequence holds three marks and then ends the text, or else up to the last line end inside the
 * whitespace after the third mark or a later one (where the regex's backtracking stopped). Line
 * starts inside a sequence that does not match share its outcome and are passed over.
 */
function removeRules(s: string): string {
  let out = '';
  let copied = 0;
  const nextLineStart = (x: number): number => (x === 0 || isLineEnd(s.charCodeAt(x - 1)) ? x : lineEnd(s, x) + 1);
  for (let p = 0; p <= s.length;) {
    let x = spaceEnd(s, p);
    let marks = 0;
    let lastLineEnd = -1;
    while (x < s.length && isRuleMark(s.charCodeAt(x))) {
      marks++;
      x++;
      for (; x < s.length && isSpace(s.charCodeAt(x)); x++) {
        if (marks >= 3 && isLineEnd(s.charCodeAt(x))) lastLineEnd = x;
      }
    }
    const end = marks < 3 ? -1 : x === s.length ? x : lastLineEnd;
    if (end < 0) {
      p = nextLineStart(x === p ? x + 1 : x);
      continue;
    }
    out += `${s.slice(copied, p)} `;
    copied = end;
    if (end === s.length) break;
    p = nextLineStart(end);
  }
  return copied ? out + s.slice(copied) : s;
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0b || c === 0x0c || c === 0x7c; // space \t \v \f |
}

/**
 * Where a run of whitespace and `|` that `cleanWhitespace` changes may start: any of them but a
 * space, or a space before another one (`\s` is `isSpace`'s class). A lone space between words,
 * prose's every other run, is passed over by the regular expression's scan.
 */
const CHANGED_RUN = /[^\S ]|\|| [\s|]/g; // `lastIndex` set before each search

/** The start of the next run at or after `i` that `cleanWhitespace` may change, or the length. */
function nextRun(s: string, i: number): number {
  CHANGED_RUN.lastIndex = i;
  return CHANGED_RUN.exec(s)?.index ?? s.length;
}

/**
 * `.replace(/\|/g, ' ').replace(/[ \t\f\v]+/g, ' ').replace(/\s*\n\s*\/g, '\n')` in one pass: in
 * each run of whitespace and `|`, a newline makes the whole run that newline; otherwise each
 * stretch of spaces, tabs and `|` becomes one space and other whitespace (no-break spaces…) stays.
 */
function cleanWhitespace(s: string): string {
  const parts: string[] = [];
  let copied = 0;
  for (let i = nextRun(s, 0); i < s.length; i = nextRun(s, i + 1)) {
    const c = s.charCodeAt(i);
    let end = i;
    let newline = false;
    let plain = true; // the run is exactly one space: nothing to change
    for (; end < s.length; end++) {
      const d = s.charCodeAt(end);
      if (d === 0x0a) newline = true;
      else if (!isBlank(d) && !isSpace(d)) break;
    }
    if (newline) {
      parts.push(s.slice(copied, i), '\n');
    } else {
      plain = end === i + 1 && c === 0x20;
      if (!plain) {
        parts.push(s.slice(copied, i));
        for (let k = i; k < end;) {
          if (isBlank(s.charCodeAt(k))) {
            parts.push(' ');
            while (k < end && isBlank(s.charCodeAt(k))) k++;
          } else {
            const from = k;
            while (k < end && !isBlank(s.charCodeAt(k))) k++;
            parts.push(s.slice(from, k));
          }
        }
      }
    }
    if (newline || !plain) copied = end;
    i = end - 1;
  }
  if (!copied) return s;
  parts.push(s.slice(copied));
  return parts.join('');
}

/**
 * Version of `plainText`'s output. A plain text stored with an item (see item-record.ts) under
 * another version is computed again when the item is loaded; bump it whenever `plainText`
 * changes what it returns for some input.
 */
export const PLAIN_TEXT_VERSION = 1;

/**
 * The key the plain text is kept under. A packed item (lazy-item.ts) takes a plain text defined
 * under it into its state (its record had none of this version) and refuses every other change.
 */
export const PLAIN_TEXT_KEY: unique symbol = Symbol('plainText');
type WithPlainText = Item & { [PLAIN_TEXT_KEY]?: string };

/**
 * The plain text of an item's body, computed once and kept on the item (ingest computes it
 * before the write, stores keep it in the item's record, so a load or a chat never recomputes
 * it). Kept under a symbol, not enumerable: it is never part of the item's JSON in the API or an
 * export, and a copy of the item made with a spread (which may change the body) does not carry it.
 */
export function plainTextOf(item: Item, opts: PlainTextOptions = {}): string {
  const kept = (item as WithPlainText)[PLAIN_TEXT_KEY];
  if (kept !== undefined) return kept;
  const text = plainText(item.body);
  if (opts.keep ?? true) keepPlainText(item, text);
  return text;
}

/** `plainTextOf`'s options. */
export interface PlainTextOptions {
  /**
   * Keep the text computed on the item. The search index passes false: it reads each item's plain
   * text once to index it, and once per hit shown, and a property added to each of a million
   * items is a heap object more apiece for every mark-compact to visit. @default true
   */
  readonly keep?: boolean;
}

/**
 * `plainTextOf` with `pause()` awaited after each of `plainText`'s passes when the text is not
 * kept yet: for a large body (in one step, 1 MB took 25-50 ms; the search index's writes use this
 * for bodies of 32 KB or more, issue 28's seventh slice).
 */
export async function plainTextOfInSteps(item: Item, pause: () => Promise<void>): Promise<string> {
  const kept = (item as WithPlainText)[PLAIN_TEXT_KEY];
  if (kept !== undefined) return kept;
  let text = item.body;
  for (const pass of PASSES) {
    text = pass(text);
    await pause();
  }
  keepPlainText(item, text);
  return text;
}

/** Keeps `text` as the plain text of `item` (a store read it from the item's record). */
export function keepPlainText(item: Item, text: string): void {
  Object.defineProperty(item, PLAIN_TEXT_KEY, { value: text, enumerable: false, configurable: true });
}
