import { createHash } from 'node:crypto';
import { z } from 'zod';

/** The kinds of content the site publishes. */
export type ItemType = 'article' | 'project' | 'experience';
/** Every item type, in listing order. */
export const ITEM_TYPES: readonly ItemType[] = ['article', 'project', 'experience'];

/** One piece of content as stored and served. */
export interface Item {
  /** Slug: lower-case letters, digits and single hyphens; generated from the title when not given. */
  readonly id: string;
  readonly type: ItemType;
  readonly title: string;
  /** Markdown or plain text; may be empty. */
  readonly body: string;
  readonly summary?: string;
  /** Free labels; order kept, duplicates (case-insensitive) dropped. */
  readonly tags: readonly string[];
  /** Absolute http(s) URL or a site path starting with `/`. */
  readonly url?: string;
  /** Publication date, `YYYY-MM-DD` or an ISO 8601 date-time. */
  readonly date?: string;
  /** When the service first stored this id (ISO 8601, UTC). */
  readonly created_at: string;
  /** When the service last stored this id (ISO 8601, UTC). */
  readonly updated_at: string;
  /**
   * The client's own vector of the item (`EMBEDDINGS_DIMENSIONS` finite numbers), searched by
   * meaning in place of the embedder's (issue 41); absent for most items.
   */
  readonly vector?: readonly number[];
}

/** An item as a client sends it: no timestamps, `id` and `tags` optional. */
export type ItemInput = Omit<Item, 'id' | 'tags' | 'created_at' | 'updated_at'> & {
  readonly id?: string;
  readonly tags?: readonly string[];
};

/** Limits on item fields; larger values are refused with the field named. */
export const ITEM_LIMITS = {
  idLength: 128,
  titleLength: 500,
  bodyLength: 1_000_000,
  summaryLength: 2_000,
  tags: 50,
  tagLength: 64,
  urlLength: 2_048,
  /**
   * Distinct words of one item (title, summary, tags and body together). Every distinct word is a
   * term in the search index, whose indexing cost and memory grow with them; real prose of a
   * megabyte holds some 10–20 thousand.
   */
  distinctWords: 20_000,
  /** Numbers of a client's `vector` at most, whatever `EMBEDDINGS_DIMENSIONS` says (the settings allow no more). */
  vectorLength: 4096,
} as const;

/** Limits on one write of many items (a batch or an upload); larger ones are refused whole. */
export const BATCH_LIMITS = {
  /**
   * Distinct words of all the items of one write together: indexing time and index memory grow
   * with them (a 5 MB batch of 500,000 made-up words took 7 s to index), far more than with text.
   */
  distinctWords: 200_000,
} as const;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Distinct words (letters and digits, case-folded) of `texts`, counted up to `max + 1`: enough
 * to tell whether there are more than `max`, without going on through the rest of a huge text.
 */
export function countDistinctWords(texts: readonly string[], max: number): number {
  const seen = new Set<string>();
  for (const text of texts) if (addDistinctWords(seen, text, max)) break;
  return seen.size;
}

/** Adds the distinct words of `text` to `seen`; true once it holds more than `max` (then it stops). */
function addDistinctWords(seen: Set<string>, text: string, max: number): boolean {
  for (const m of text.matchAll(WORD)) {
    seen.add(m[0].toLowerCase());
    if (seen.size > max) return true;
  }
  return false;
}

/** Slug syntax. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** The made-up origin site paths are resolved against (`.invalid` is reserved: never a real host). */
const SITE_ORIGIN = 'https://site.invalid';
/** C0 controls and DEL: URL parsers drop tabs and newlines anywhere, so `/\t/evil.example` is `//evil.example`. */
const CONTROL = /[\u0000-\u001f\u007f]/;
/** Also whitespace (Unicode's too) and backslashes, which browsers read as `/` in http(s) URLs. */
const UNSAFE_IN_SITE_PATH = /[\u0000-\u001f\u007f\\\s]/;

/**
 * A site path: starts with `/`, and a browser resolves it on this site. Checked the way browsers
 * parse (WHATWG URL): resolved against a dummy origin, it must stay on that origin, so `//host`,
 * `/\\host`, `/\t/host` and the like (protocol-relative, off-site) are refused, and so is a path
 * that normalises to `//…` (`/..//host`). Backslashes, whitespace and control characters are
 * refused anywhere, so what is stored is what a browser follows.
 */
export function isSitePath(v: string): boolean {
  if (!v.startsWith('/') || UNSAFE_IN_SITE_PATH.test(v)) return false;
  try {
    const u = new URL(v, SITE_ORIGIN);
    // `/..//evil.example` stays on the site but normalises to `//evil.example`, which anything
    // that re-emits the normalised path (a redirect, a sitemap) would send off-site.
    return u.origin === SITE_ORIGIN && !u.pathname.startsWith('//');
  } catch {
    return false;
  }
}

function isSiteUrl(v: string): boolean {
  if (v.startsWith('/') || v.startsWith('\\')) return isSitePath(v);
  if (CONTROL.test(v)) return false;
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

function isRealDate(v: string): boolean {
  if (!DATE_PATTERN.test(v)) return false;
  const day = v.slice(0, 10);
  const d = new Date(`${day}T00:00:00Z`);
  return (
    !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === day && !Number.isNaN(Date.parse(v.replace(' ', 'T')))
  );
}

const optionalText = (max: number, field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .trim()
    .max(max, { error: `${field} is longer than ${max} characters` })
    .optional()
    .transform((v) => (v === '' ? undefined : v));

/** The zod schema of `ItemInput`. Unknown keys are ignored; strings are trimmed (except `body`). */
export const itemInputSchema = z.object({
  id: z
    .string({ error: 'id must be a string' })
    .trim()
    .max(ITEM_LIMITS.idLength, { error: `id is longer than ${ITEM_LIMITS.idLength} characters` })
    .regex(SLUG_PATTERN, {
      error: 'id must be a slug: lower-case letters, digits and single hyphens (e.g. "my-first-post")',
    })
    .optional(),
  type: z.enum(ITEM_TYPES as [ItemType, ...ItemType[]], { error: `type must be one of ${ITEM_TYPES.join(', ')}` }),
  title: z
    .string({ error: 'title is required and must be a string' })
    .trim()
    .min(1, { error: 'title must not be empty' })
    .max(ITEM_LIMITS.titleLength, { error: `title is longer than ${ITEM_LIMITS.titleLength} characters` }),
  body: z
    .string({ error: 'body is required and must be a string (markdown or text; may be empty)' })
    .max(ITEM_LIMITS.bodyLength, { error: `body is longer than ${ITEM_LIMITS.bodyLength} characters` }),
  summary: optionalText(ITEM_LIMITS.summaryLength, 'summary'),
  tags: z
    .array(
      z
        .string({ error: 'tags must be strings' })
        .trim()
        .min(1, { error: 'tags must not be empty strings' })
        .max(ITEM_LIMITS.tagLength, { error: `a tag is longer than ${ITEM_LIMITS.tagLength} characters` }),
      { error: 'tags must be an array of strings' },
    )
    .max(ITEM_LIMITS.tags, { error: `at most ${ITEM_LIMITS.tags} tags` })
    .optional(),
  url: optionalText(ITEM_LIMITS.urlLength, 'url').refine((v) => v === undefined || isSiteUrl(v), {
    error: 'url must be an absolute http(s) URL or a site path starting with /',
  }),
  date: optionalText(40, 'date').refine((v) => v === undefined || isRealDate(v), {
    error: 'date must be a calendar date YYYY-MM-DD or an ISO 8601 date-time',
  }),
  // Its length is checked against EMBEDDINGS_DIMENSIONS by `validateItem` (the schema has no settings).
  vector: z
    .array(
      z
        .number({ error: 'vector must hold finite numbers only' })
        .refine(Number.isFinite, 'vector must hold finite numbers only'),
      {
        error: 'vector must be an array of numbers',
      },
    )
    .max(ITEM_LIMITS.vectorLength, { error: `vector holds more than ${ITEM_LIMITS.vectorLength} numbers` })
    .nullable()
    .optional()
    .transform((v) => v ?? undefined),
});

/** One problem with one field of one item. */
export interface ItemIssue {
  /** Dotted path of the field, e.g. `title` or `tags.2`; empty for the item itself. */
  readonly field: string;
  readonly message: string;
}

/** The outcome of validating one raw item. */
export type ItemValidation = { ok: true; item: ItemInput & { id: string } } | { ok: false; issues: ItemIssue[] };

/**
 * A slug from a title: ASCII-folded, lower-case, hyphen-separated, at most 80 characters. A
 * title with no Latin letters or digits gets `item-<8 hex of its SHA-256>`, so ingesting the same
 * title twice still lands on the same id.
 */
export function slugify(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/g, '');
  if (slug) return slug;
  return `item-${createHash('sha256').update(title).digest('hex').slice(0, 8)}`;
}

function dedupeTags(tags: readonly string[] | undefined): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of tags ?? []) {
    const key = t.toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      out.push(t);
    }
  }
  return out;
}

/** The text fields of an item, whose words are indexed. */
function textsOf(item: ItemInput): string[] {
  return [item.title, item.summary ?? '', ...(item.tags ?? []), item.body];
}

/**
 * Why a write of these (validated) items is refused as a whole, or undefined: more than
 * `BATCH_LIMITS.distinctWords` distinct words together. Check before storing anything. Counted
 * an item at a time, awaiting `step()` between items (time-steps.ts), so a batch of megabytes
 * is never one long step of the event loop.
 */
export async function batchVocabularyProblem(
  items: readonly ItemInput[],
  step: () => Promise<void> | undefined,
): Promise<string | undefined> {
  const max = BATCH_LIMITS.distinctWords;
  const seen = new Set<string>();
  for (const item of items) {
    if (textsOf(item).some((t) => addDistinctWords(seen, t, max))) break;
    await step();
  }
  return seen.size > max
    ? `the items hold more than ${max} distinct words together; nothing was stored: send them in smaller batches`
    : undefined;
}

/** What `validateItem` checks beyond the item's own rules. */
export interface ItemValidationOptions {
  /**
   * Length every `vector` must have (`EMBEDDINGS_DIMENSIONS`); absent: a vector's length is not
   * checked (a stored item validated again, whose vector was checked when it was written).
   */
  readonly vectorDimensions?: number;
}

/**
 * Validates a raw value as an item; on success the id is filled in (slug of the title when absent).
 * A `vector` of another length than `opts.vectorDimensions` is refused naming `vector`.
 */
export function validateItem(raw: unknown, opts: ItemValidationOptions = {}): ItemValidation {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, issues: [{ field: '', message: 'an item must be a JSON object' }] };
  }
  const r = itemInputSchema.safeParse(raw);
  if (!r.success) {
    return {
      ok: false,
      // A vector's problem names `vector`, not the number's place in it.
      issues: r.error.issues.map((i) => ({
        field: i.path[0] === 'vector' ? 'vector' : i.path.map(String).join('.'),
        message: i.message,
      })),
    };
  }
  const v = r.data;
  const max = ITEM_LIMITS.distinctWords;
  if (countDistinctWords(textsOf(v), max) > max) {
    const message = `the item holds more than ${max} distinct words (title, summary, tags and body together); split it into several items`;
    return { ok: false, issues: [{ field: 'body', message }] };
  }
  const dims = opts.vectorDimensions;
  if (v.vector !== undefined && dims !== undefined && v.vector.length !== dims) {
    const message = `vector holds ${v.vector.length} numbers; EMBEDDINGS_DIMENSIONS is ${dims}`;
    return { ok: false, issues: [{ field: 'vector', message }] };
  }
  const item: ItemInput & { id: string } = {
    id: v.id ?? slugify(v.title),
    type: v.type,
    title: v.title,
    body: v.body,
    tags: dedupeTags(v.tags),
    ...(v.summary !== undefined ? { summary: v.summary } : {}),
    ...(v.url !== undefined ? { url: v.url } : {}),
    ...(v.date !== undefined ? { date: v.date } : {}),
    ...(v.vector !== undefined ? { vector: v.vector } : {}),
  };
  return { ok: true, item };
}

/** What ingesting an item did to the in-memory copy. */
export type ItemChange = 'created' | 'updated' | 'unchanged';

/** True when validated `input` says exactly what `previous` says (timestamps aside). */
export function sameContent(input: ItemInput & { id: string }, previous: Item): boolean {
  const tags = input.tags ?? [];
  return (
    input.type === previous.type &&
    input.title === previous.title &&
    input.body === previous.body &&
    input.summary === previous.summary &&
    input.url === previous.url &&
    input.date === previous.date &&
    tags.length === previous.tags.length &&
    tags.every((t, i) => t === previous.tags[i]) &&
    sameVector(input.vector, previous.vector)
  );
}

function sameVector(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A stored item from validated input: `created_at` kept from `previous`, `updated_at` = now. */
export function stamp(input: ItemInput & { id: string }, nowMs: number, previous?: Item): Item {
  const now = new Date(nowMs).toISOString();
  return { ...input, tags: [...(input.tags ?? [])], created_at: previous?.created_at ?? now, updated_at: now };
}

/** What `compareNewestFirst` reads of an item. */
export type SortKeys = Pick<Item, 'id' | 'date' | 'created_at' | 'updated_at'>;

/** Newest first: by `date` (else `created_at`), then `updated_at`, then id (deterministic). */
export function compareNewestFirst(a: SortKeys, b: SortKeys): number {
  const da = a.date ?? a.created_at;
  const db = b.date ?? b.created_at;
  if (da !== db) return da < db ? 1 : -1;
  if (a.updated_at !== b.updated_at) return a.updated_at < b.updated_at ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
