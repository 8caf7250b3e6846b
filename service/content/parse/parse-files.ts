import { CORE_SCHEMA, binaryTag, load, mergeTag, omapTag, pairsTag, setTag } from 'js-yaml';
import type { ItemType } from '../item';
import { parseJsonArrayInSteps } from './json-array-steps';
import { isLineEnd, isSpace } from '../char-class';

/** File formats `/api/upload` accepts. */
export type UploadFormat = 'md' | 'txt' | 'json' | 'ndjson';

/** Accepted extensions and their format. */
export const UPLOAD_EXTENSIONS: Readonly<Record<string, UploadFormat>> = {
  '.md': 'md',
  '.markdown': 'md',
  '.txt': 'txt',
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
};

/** A file that could not be read as items; `line` is 1-based where it applies. */
export class FileParseError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(message);
    this.name = 'FileParseError';
  }
}

/** The format of a file name, or undefined when its extension is not accepted. */
export function formatOf(filename: string): UploadFormat | undefined {
  const m = /(\.[A-Za-z0-9]+)$/.exec(filename);
  return m ? UPLOAD_EXTENSIONS[m[1].toLowerCase()] : undefined;
}

/** Defaults a file's items take when they do not say. */
export interface FileDefaults {
  /** Type of `.md`/`.txt` items without one (form field `type`). @default 'article' */
  readonly type?: ItemType;
}

/**
 * The YAML schema of front matter: the tags of js-yaml 3's safe schema (which gray-matter used)
 * except `!!timestamp`. js-yaml 3 turned `2024-02-30` into 1 March and `2024-13-45` into
 * 14 February 2025 without a word (issue 37); a date stays the string it was written as, and
 * the item's own rule (`isRealDate` in item.ts, the same as `/api/ingest`) judges it.
 */
const FRONT_MATTER_SCHEMA = CORE_SCHEMA.withTags(mergeTag, binaryTag, omapTag, pairsTag, setTag);

/** Parses a YAML front matter block as uploads read it (`FRONT_MATTER_SCHEMA`: dates stay strings). */
export function parseFrontMatterYaml(text: string): unknown {
  return load(text, { schema: FRONT_MATTER_SCHEMA });
}

// gray-matter can evaluate JavaScript front matter (`---js`); content is data, never code.
const refuse = (): never => {
  throw new Error('only YAML or JSON front matter is accepted');
};
const ENGINES: Readonly<Record<string, (text: string) => unknown>> = {
  yaml: parseFrontMatterYaml,
  json: (text) => JSON.parse(text) as unknown,
  javascript: refuse,
  coffee: refuse,
};
const ALIASES: Readonly<Record<string, string>> = {
  js: 'javascript',
  javascript: 'javascript',
  coffee: 'coffee',
  coffeescript: 'coffee',
  cson: 'coffee',
  yaml: 'yaml',
  yml: 'yaml',
};

/** A Markdown file split into its front matter (data) and the rest. */
export interface FrontMatter {
  readonly data: Record<string, unknown>;
  readonly content: string;
}

/** True when every line of `block` is blank or a `#` comment (gray-matter then skips parsing). */
function onlyComments(block: string): boolean {
  for (const line of block.split('\n')) {
    const t = line.trim();
    if (t !== '' && !(t[0] === '#' && line.length > line.indexOf('#') + 1)) return false;
  }
  return true;
}

/**
 * gray-matter's split of a file into front matter and content, with the options this service
 * always used (YAML by default, `---json` accepted, `---js` and the like refused), in linear
 * time: gray-matter itself tests the block for comments with `/^\s*#[^\n]+/gm`, which takes
 * seconds on a front matter of blank lines (issue 29). The YAML is parsed by
 * `parseFrontMatterYaml` (js-yaml 3's safe tags without `!!timestamp`).
 */
export function frontMatter(input: string): FrontMatter {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  if (!text.startsWith('---') || text[3] === '-') return { data: {}, content: text };
  let rest = text.slice(3);
  // The language follows the opening delimiter on its line, as in `---json`.
  const raw = rest.slice(0, rest.search(/\r?\n/));
  const name = raw.trim();
  if (name) rest = rest.slice(raw.length);
  const close = rest.indexOf('\n---');
  const block = close < 0 ? rest : rest.slice(0, close);
  let content = close < 0 ? '' : rest.slice(close + 4);
  if (content[0] === '\r') content = content.slice(1);
  if (content[0] === '\n') content = content.slice(1);
  if (block.trim() === '' || onlyComments(block)) return { data: {}, content };
  const language = name || 'yaml';
  const engine = ENGINES[language] ?? ENGINES[ALIASES[language.toLowerCase()] ?? language];
  if (!engine) throw new Error(`front matter language "${language}" is not supported`);
  const data = engine(block);
  return {
    data: data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {},
    content,
  };
}

function stem(filename: string): string {
  const base = filename.replace(/^.*[\\/]/, '');
  return (
    base
      .replace(/\.[^.]+$/, '')
      .replace(/[-_]+/g, ' ')
      .trim() || base
  );
}

/**
 * The leading `# Heading` of a Markdown body: what `/^\s*#\s+(.+?)\s*#*\s*(\n|$)/.exec(body)`
 * gave before issue 29 (`title` = group 1, `end` = the match's length), in linear time. That
 * pattern was cubic: a heading of 6,000 spaces took 27 s.
 *
 * The regex tries titles `[r, x)` in this order: `r` from the end of the whitespace after `#`
 * backwards, `x` from `r + 1` forwards within the line; a title fits when the rest from `x`
 * is `\s*#*\s*` then a newline or the end (`tail[x]`, computed once from the right). For a
 * shorter `r` only `x = r + 1` is new (longer titles were tried already), so each `x` is looked
 * at once.
 */
export function leadingHeading(body: string): { title: string; end: number } | undefined {
  const n = body.length;
  let q = 0;
  while (q < n && isSpace(body.charCodeAt(q))) q++;
  if (body[q] !== '#') return undefined;
  let r0 = q + 1;
  while (r0 < n && isSpace(body.charCodeAt(r0))) r0++;
  if (r0 === q + 1) return undefined;
  // tail[x]: `\s*#*\s*(\n|$)` matches at x; built right to left from `nl` (`\s*(\n|$)`) and
  // `hashes` (`#*\s*(\n|$)`).
  const tail = new Uint8Array(n + 1);
  let nl = true;
  let hashes = true;
  tail[n] = 1;
  for (let x = n - 1; x > q; x--) {
    const c = body.charCodeAt(x);
    const space = isSpace(c);
    nl = c === 0x0a || (space && nl);
    hashes = nl || (c === 0x23 && hashes);
    tail[x] = hashes || (space && tail[x + 1] === 1) ? 1 : 0;
  }
  let found: { r: number; x: number } | undefined;
  for (let x = r0 + 1; x <= n && !isLineEnd(body.charCodeAt(x - 1)); x++) {
    if (tail[x]) {
      found = { r: r0, x };
      break;
    }
  }
  for (let r = r0 - 1; !found && r >= q + 2; r--) {
    if (!isLineEnd(body.charCodeAt(r)) && tail[r + 1]) found = { r, x: r + 1 };
  }
  if (!found) return undefined;
  return { title: body.slice(found.r, found.x), end: tailEnd(body, found.x) };
}

/**
 * Where `\s*#*\s*(\n|$)` ends when matched at `x` (it does): the regex's greedy first choice,
 * all whitespace, all `#`, all whitespace, then back to the last newline of that whitespace (or
 * the end of the text); failing that, back to the last newline of the first whitespace run.
 */
function tailEnd(body: string, x: number): number {
  const n = body.length;
  /** The last newline in [from, to), or -1. */
  const lastNewline = (from: number, to: number): number => {
    const i = to > from ? body.lastIndexOf('\n', to - 1) : -1;
    return i >= from ? i : -1;
  };
  let a = x;
  while (a < n && isSpace(body.charCodeAt(a))) a++;
  let b = a;
  while (b < n && body.charCodeAt(b) === 0x23) b++;
  let c = b;
  while (c < n && isSpace(body.charCodeAt(c))) c++;
  if (c === n) return n;
  const inSecond = lastNewline(b, c);
  if (inSecond >= 0) return inSecond + 1;
  return lastNewline(x, a) + 1;
}

function fromMarkdown(filename: string, text: string, defaults: FileDefaults): unknown {
  let parsed: FrontMatter;
  try {
    parsed = frontMatter(text);
  } catch (e) {
    throw new FileParseError(`front matter is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  // Values as written: a date is checked by the item's rule (validateItem), as an ingested one is.
  const data: Record<string, unknown> = { ...parsed.data };
  // Leading blank lines go (linear: anchored, one whitespace run).
  let body = parsed.content.replace(/^\s*\n/, '');
  // A leading `# Heading` is the title when the front matter has none, and is dropped when it
  // repeats the front matter's title.
  const h = leadingHeading(body);
  if (data.title === undefined) {
    data.title = h ? h.title : stem(filename);
    if (h) body = body.slice(h.end);
  } else if (h && typeof data.title === 'string' && h.title.trim().toLowerCase() === data.title.trim().toLowerCase()) {
    body = body.slice(h.end);
  }
  if (typeof data.tags === 'string')
    data.tags = data.tags
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
  return { type: defaults.type ?? 'article', ...data, body: body.trim() };
}

function fromText(filename: string, text: string, defaults: FileDefaults): unknown {
  const normalized = text.replace(/\r\n?/g, '\n').replace(/^\uFEFF/, '');
  const lines = normalized.split('\n');
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) return { type: defaults.type ?? 'article', title: stem(filename), body: '' };
  // The first non-empty line is the title when it reads like one; else the file name is.
  const candidate = lines[first].trim();
  if (candidate.length <= 200) {
    return {
      type: defaults.type ?? 'article',
      title: candidate,
      body: lines
        .slice(first + 1)
        .join('\n')
        .trim(),
    };
  }
  return { type: defaults.type ?? 'article', title: stem(filename), body: normalized.trim() };
}

function fromJson(text: string): unknown[] {
  let v: unknown;
  try {
    v = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new FileParseError(`not valid JSON: ${(e as Error).message}`);
  }
  if (Array.isArray(v)) return v;
  if (v && typeof v === 'object' && Array.isArray((v as { items?: unknown }).items))
    return (v as { items: unknown[] }).items;
  return [v];
}

function ndjsonLines(text: string): string[] {
  return text.replace(/^\uFEFF/, '').split(/\r?\n/);
}

/** Parses line `lineNo` (1-based) of an `.ndjson` file into `out`; a blank line holds no item. */
function ndjsonLine(line: string, lineNo: number, out: unknown[]): void {
  if (line.trim() === '') return;
  try {
    out.push(JSON.parse(line));
  } catch (e) {
    throw new FileParseError(`line ${lineNo} is not valid JSON: ${(e as Error).message}`, lineNo);
  }
}

function fromNdjson(text: string): unknown[] {
  const out: unknown[] = [];
  const lines = ndjsonLines(text);
  for (let i = 0; i < lines.length; i++) ndjsonLine(lines[i], i + 1, out);
  return out;
}

/** `pieces` with the byte order mark the text they make may start with left out. */
function* withoutBom(pieces: Iterable<string>): Generator<string> {
  let first = true;
  for (const piece of pieces) {
    if (first && piece) {
      first = false;
      if (piece.charCodeAt(0) === 0xfeff) {
        yield piece.slice(1);
        continue;
      }
    }
    yield piece;
  }
}

/**
 * `fromNdjson` of the text `pieces` make together, a line at a time with `step()` after each
 * line and each piece: the lines are cut from the pieces as they come (a line across pieces is
 * joined from its parts), so the file is never one string. Joined and split whole, a 6 MB file
 * was one step of ~30 ms on the test machine, most of it first touches of the fresh memory the
 * whole text and its flat copy took (issue 37).
 */
async function ndjsonInSteps(pieces: Iterable<string>, step: () => Promise<void> | undefined): Promise<unknown[]> {
  const out: unknown[] = [];
  // The parts of the line not ended yet.
  let open: string[] = [];
  let lineNo = 0;
  for (const piece of withoutBom(pieces)) {
    let at = 0;
    for (let nl = piece.indexOf('\n'); nl >= 0; nl = piece.indexOf('\n', at)) {
      let line = piece.slice(at, nl);
      if (open.length) {
        open.push(line);
        line = open.join('');
        open = [];
      }
      // `\r\n` ends a line as `\n` does (split(/\r?\n/) in fromNdjson).
      if (line.endsWith('\r')) line = line.slice(0, -1);
      ndjsonLine(line, ++lineNo, out);
      at = nl + 1;
      await step();
    }
    if (at < piece.length) open.push(at ? piece.slice(at) : piece);
    await step();
  }
  ndjsonLine(open.join(''), ++lineNo, out);
  return out;
}

/**
 * Turns one uploaded file into raw items (validated later, like ingested ones): a `.md` file
 * (YAML front matter + body) or a `.txt` file is one item; `.json` is an item, an array of
 * items or `{items: [...]}`; `.ndjson` is one item per line.
 */
export function parseFile(
  filename: string,
  format: UploadFormat,
  text: string,
  defaults: FileDefaults = {},
): unknown[] {
  switch (format) {
    case 'md':
      return [fromMarkdown(filename, text, defaults)];
    case 'txt':
      return [fromText(filename, text, defaults)];
    case 'json':
      return fromJson(text);
    case 'ndjson':
      return fromNdjson(text);
  }
}

/**
 * `parseFile` of the text a file's `pieces` make together (it is decoded a piece at a time;
 * `pieces()` reads it from its start, again for a second reading), with `step()` between the
 * lines of an `.ndjson` file and between the elements of a `.json` array, both cut from the
 * pieces as they come (`ndjsonInSteps`, `parseJsonArrayInSteps`), so a file of 10,000 items is
 * neither one long step of the event loop (issue 37) nor one string. The other formats are joined
 * (a step after each piece) and parsed whole, as is a `.json` file that is not an array (an item,
 * `{items: [...]}`) or is not valid JSON, or an array of more than `maxSteppedElements` (more
 * than the caller takes). The items are those `parseFile` returns.
 */
export async function parseFileInSteps(
  filename: string,
  format: UploadFormat,
  pieces: () => Iterable<string>,
  step: () => Promise<void> | undefined,
  defaults: FileDefaults = {},
  maxSteppedElements?: number,
): Promise<unknown[]> {
  if (format === 'ndjson') return ndjsonInSteps(pieces(), step);
  if (format === 'json') {
    const items = await parseJsonArrayInSteps(withoutBom(pieces()), step, maxSteppedElements);
    if (items) return items;
  }
  let text = '';
  for (const piece of pieces()) {
    text += piece;
    await step();
  }
  return parseFile(filename, format, text, defaults);
}
