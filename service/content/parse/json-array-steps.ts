import {
  BACKSLASH,
  CARRIAGE_RETURN,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COMMA,
  NEWLINE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  SPACE,
  TAB,
} from '../../lib/char-codes';

/** How many characters the scan reads between two calls of `step()`. */
const SCAN_SLICE = 1 << 16;

function isJsonSpace(c: number): boolean {
  return c === SPACE || c === NEWLINE || c === CARRIAGE_RETURN || c === TAB;
}

/**
 * `JSON.parse` of the text `pieces` make together (or of `pieces`, one string) when it is a
 * top-level JSON array: an element at a time, each parsed once the scan has found its end, with
 * `step()` after each element and every `SCAN_SLICE` characters (time-steps.ts), so a
 * 10,000-item upload is not one 50-170 ms parse (issue 37). The text is never one string: an
 * element's text is cut from its piece, or joined from its parts when it spans pieces (a 6 MB
 * text flattened was one copy into fresh memory, ~30 ms of one step on the test machine).
 *
 * The scan reads only strings, their escapes and bracket depth, and the elements are judged by
 * `JSON.parse` of their own text. The result equals `JSON.parse` of the whole; undefined when the
 * text is not one array whose elements are separated by commas at its top level, any part of it
 * is not valid JSON, or it holds more than `maxElements` (the caller parses it whole, for the
 * value or the error: millions of tiny elements are not parsed one call each).
 */
export async function parseJsonArrayInSteps(
  pieces: string | Iterable<string>,
  step: () => Promise<void> | undefined,
  maxElements = Number.MAX_SAFE_INTEGER,
): Promise<unknown[] | undefined> {
  const out: unknown[] = [];
  // Whether the scan has passed the array's `[`, and its `]`.
  let opened = false;
  let closed = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  // The current element's text in the pieces before this one.
  let parts: string[] = [];
  let scanned = 0;
  /** Parses the element that ends at `to` of `piece` (it started at `from`, or in `parts`). */
  const element = (piece: string, from: number, to: number): boolean => {
    let text = piece.slice(from, to);
    if (parts.length) {
      parts.push(text);
      text = parts.join('');
      parts = [];
    }
    // `[]` has no element; `[1,]` has an empty last one, which JSON.parse of the whole refuses.
    if (closed && out.length === 0 && text.trim() === '') return true;
    try {
      out.push(JSON.parse(text));
      return true;
    } catch {
      return false;
    }
  };
  for (const piece of typeof pieces === 'string' ? [pieces] : pieces) {
    // Where the current element starts in this piece.
    let from = 0;
    for (let i = 0; i < piece.length; i++) {
      if (++scanned % SCAN_SLICE === 0) await step();
      const c = piece.charCodeAt(i);
      if (!opened || closed) {
        if (isJsonSpace(c)) continue;
        if (closed || c !== OPEN_ARRAY) return undefined;
        opened = true;
        depth = 1;
        from = i + 1;
      } else if (escaped) escaped = false;
      else if (inString) {
        if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
      else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        depth--;
        if (depth === 0) {
          if (c !== CLOSE_ARRAY) return undefined;
          closed = true;
          if (!element(piece, from, i)) return undefined;
          await step();
        }
      } else if (c === COMMA && depth === 1) {
        if (!element(piece, from, i)) return undefined;
        // A comma: one more element follows.
        if (out.length >= maxElements) return undefined;
        from = i + 1;
        await step();
      }
    }
    if (opened && !closed && from < piece.length) parts.push(from ? piece.slice(from) : piece);
  }
  return closed ? out : undefined;
}
