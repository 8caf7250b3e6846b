/** How many characters the scan reads between two calls of `step()`. */
const SCAN_SLICE = 1 << 16;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Where the elements of the JSON array `text` start and end, read in slices of `SCAN_SLICE`
 * characters with `step()` between them, or undefined when `text` is not one array whose
 * elements are separated by commas at its top level (then `JSON.parse` of the whole says why),
 * or when it holds more than `maxElements`.
 * Only strings, their escapes and bracket depth are read: each element is judged by
 * `JSON.parse` of its own text.
 */
async function elementSpans(
  text: string,
  step: () => Promise<void> | undefined,
  maxElements: number,
): Promise<Array<[number, number]> | undefined> {
  let i = 0;
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_ARRAY) return undefined;
  const spans: Array<[number, number]> = [];
  let start = i + 1;
  let depth = 1;
  let inString = false;
  let end = -1;
  for (i += 1; i < text.length; i++) {
    if (i % SCAN_SLICE === 0) await step();
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
      if (depth === 0) {
        end = i;
        break;
      }
    } else if (c === COMMA && depth === 1) {
      spans.push([start, i]);
      start = i + 1;
      // A comma: one more element follows.
      if (spans.length >= maxElements) return undefined;
    }
  }
  if (end < 0 || text.charCodeAt(end) !== CLOSE_ARRAY) return undefined;
  for (let k = end + 1; k < text.length; k++) if (!isJsonSpace(text.charCodeAt(k))) return undefined;
  const last = text.slice(start, end);
  // `[]` has no element; `[1,]` has an empty last one, which JSON.parse of the whole refuses.
  if (spans.length || last.trim() !== '') spans.push([start, end]);
  return spans;
}

/**
 * `JSON.parse(text)` of a top-level JSON array, an element at a time with `step()` between
 * elements (time-steps.ts), so a 10,000-item upload is not one 50-170 ms parse (issue 37). The
 * result equals `JSON.parse(text)`; undefined when `text` is not a JSON array, any part of it is
 * not valid JSON, or it holds more than `maxElements` (the caller parses it whole, for the value
 * or the error: millions of tiny elements are not parsed one call each).
 */
export async function parseJsonArrayInSteps(
  text: string,
  step: () => Promise<void> | undefined,
  maxElements = Number.MAX_SAFE_INTEGER,
): Promise<unknown[] | undefined> {
  const spans = await elementSpans(text, step, maxElements);
  if (!spans) return undefined;
  const out: unknown[] = [];
  for (const [from, to] of spans) {
    try {
      out.push(JSON.parse(text.slice(from, to)));
    } catch {
      return undefined;
    }
    await step();
  }
  return out;
}
