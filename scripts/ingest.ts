import { loadFolder, type LoadedItem } from '../service/content/parse/folder-loader';
import { describeItems, idCollisions } from '../service/content/id-collisions';
import {
  ApiError,
  createClient,
  type BatchOutcome,
  type ItemInput,
  type SearchClient,
} from '../service/http/contract/client';
import { ITEM_TYPES, validateItem, type ItemType } from '../service/content/item';
import { COLLECTION_ITEM_TYPES } from '../service/http/contract/content';
import { MAX_BATCH_OPERATIONS } from '../service/http/contract/ingest';
import type { ContentCollection } from '../contract/routes';

/** Options of one folder ingest (`npm run ingest -- DIR ...`), or of a delete (`--delete ID...`). */
export interface IngestOptions {
  /** The folder to send; none when the run only deletes. */
  readonly dir?: string;
  /** Ids to delete (after the folder is sent, if any). */
  readonly delete?: readonly string[];
  /**
   * Deletes the items of the scope that the folder no longer holds, so the service mirrors it:
   * the scope is the items carrying `tag` when given, else those of `type`. Skipped when any item
   * of the folder failed (its id is not known for sure, and its stored version must not go).
   * @default false
   */
  readonly prune?: boolean;
  /** A tag added to every item sent (and the scope of `prune`). */
  readonly tag?: string;
  /** @default 'http://127.0.0.1:8080' */
  readonly url?: string;
  /** @default process.env.API_TOKEN */
  readonly token?: string;
  /** Type of `.md`/`.txt` items without one. @default 'article' */
  readonly type?: ItemType;
  /** Split Markdown files into one item per `##` section (as the demo does). @default false */
  readonly sections?: boolean;
  /** Parse and count only; send nothing. @default false */
  readonly dryRun?: boolean;
  /** Items per request. @default 200 */
  readonly batchSize?: number;
  /** Network retries before giving up. @default 4 */
  readonly retries?: number;
  /** Where progress and the summary go. @default process.stderr */
  readonly out?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Waits (tests pass a fast one). @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The outcome of an ingest. */
export interface IngestSummary {
  readonly files: number;
  /** Items stored: created + updated + unchanged. */
  readonly stored: number;
  /** Of those, new ids, changed items, and items the service already held as sent (not written again). */
  readonly created: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly failed: ReadonlyArray<{ readonly file: string; readonly reason: string }>;
  /** Ids deleted: by `--delete`, and by `--prune` (those the folder no longer holds). */
  readonly deleted: readonly string[];
  /** Ids of `--delete` the service did not hold (nothing to do). */
  readonly notFound: readonly string[];
}

/** A stop the user must fix (bad token, unreachable service); printed without a stack trace. */
export class IngestError extends Error {}

/**
 * Walks `dir`, parses its files and sends them to `/api/ingest-batch` in batches, with progress;
 * then deletes the ids of `delete` and, with `prune`, the items of its scope that the folder no
 * longer holds (listed through the collections, deleted 1,000 ids a request).
 */
export async function ingestFolder(opts: IngestOptions): Promise<IngestSummary> {
  const out = opts.out ?? process.stderr;
  const sent = opts.dir
    ? await sendFolder({ ...opts, dir: opts.dir })
    : { files: 0, stored: 0, created: 0, updated: 0, unchanged: 0, failed: [], held: [] as string[] };
  const api = createClient({ baseUrl: baseOf(opts), token: tokenOf(opts) });
  const deleted: string[] = [];
  const notFound: string[] = [];
  const remove = async (ids: readonly string[]) => {
    for (let i = 0; i < ids.length; i += MAX_BATCH_OPERATIONS) {
      const done = await withRetries(() => api.delete(ids.slice(i, i + MAX_BATCH_OPERATIONS)), opts);
      deleted.push(...done.deleted);
      notFound.push(...done.not_found);
    }
  };
  if (opts.delete?.length && !opts.dryRun) await remove(opts.delete);
  if (opts.prune && opts.dir) {
    const scope = opts.tag !== undefined ? `tag ${opts.tag}` : `type ${opts.type ?? 'article'}`;
    if (sent.failed.length) {
      out.write(
        `ingest: not pruned: ${sent.failed.length} items failed; fix them and run again (nothing of ${scope} deleted)\n`,
      );
    } else {
      const folder = new Set(sent.held);
      const stale = (await idsInScope(api, opts)).filter((id) => !folder.has(id));
      out.write(
        `ingest: prune (${scope}): ${stale.length} items no longer in the folder${opts.dryRun ? ' (dry run: none deleted)' : ''}\n`,
      );
      if (!opts.dryRun) await remove(stale);
    }
  }
  if (opts.delete?.length || opts.prune)
    out.write(`ingest: ${deleted.length} deleted, ${notFound.length} not found${opts.dryRun ? ' (dry run)' : ''}\n`);
  for (const id of notFound) out.write(`  not found: ${id}\n`);
  const { files, stored, created, updated, unchanged, failed } = sent;
  return { files, stored, created, updated, unchanged, failed, deleted, notFound };
}

const baseOf = (opts: IngestOptions) => (opts.url ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const tokenOf = (opts: IngestOptions) => opts.token ?? process.env.API_TOKEN;

/** The ids of the items `--prune` may delete: those with `--tag` (every collection), else those of `--type`. */
async function idsInScope(api: SearchClient, opts: IngestOptions): Promise<string[]> {
  const collections = (Object.keys(COLLECTION_ITEM_TYPES) as ContentCollection[]).filter(
    (c) => opts.tag !== undefined || COLLECTION_ITEM_TYPES[c] === (opts.type ?? 'article'),
  );
  const ids: string[] = [];
  for (const c of collections) {
    for (let offset = 0; ; offset += 100) {
      const page = await withRetries(
        () => api.list(c, { limit: 100, offset, ...(opts.tag !== undefined ? { tag: [opts.tag] } : {}) }),
        opts,
      );
      ids.push(...page.items.map((i) => i.id));
      if (offset + 100 >= page.total || !page.items.length) break;
    }
  }
  return ids;
}

/** Sends the folder's items (what `ingestFolder` did before `--delete` and `--prune`); `held` are the folder's ids. */
async function sendFolder(
  opts: IngestOptions & { readonly dir: string },
): Promise<Omit<IngestSummary, 'deleted' | 'notFound'> & { held: string[] }> {
  const out = opts.out ?? process.stderr;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const base = baseOf(opts);
  const token = tokenOf(opts);
  const batchSize = opts.batchSize ?? 200;
  const retries = opts.retries ?? 4;
  const api = createClient({ baseUrl: base, token });
  const load = loadFolder(opts.dir, { type: opts.type ?? 'article', sections: opts.sections ?? false });
  const { files } = load;
  const failed = [...load.failed];
  const tagged = opts.tag === undefined ? load.items : load.items.map((p) => withTag(p, opts.tag!));
  const { send: pending, refused } = withoutCollisions(tagged);
  // Every id the folder holds (sent or refused): what `--prune` keeps.
  const held = tagged.flatMap((p) => {
    const v = validateItem(p.item);
    return v.ok ? [v.item.id] : [];
  });
  failed.push(...refused);
  let stored = 0;
  const changes = { created: 0, updated: 0, unchanged: 0 };
  const started = Date.now();
  const progress = (done: number) => {
    const secs = Math.max((Date.now() - started) / 1000, 0.001);
    const rate = done / secs;
    const eta = rate > 0 ? Math.round((pending.length - done) / rate) : 0;
    if (out.isTTY) {
      const width = 30;
      const fill = pending.length ? Math.round((done / pending.length) * width) : width;
      out.write(
        `\r[${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${done}/${pending.length} ${rate.toFixed(0)} items/s ETA ${eta}s`,
      );
    } else {
      out.write(`ingest: ${done}/${pending.length} items (${rate.toFixed(0)} items/s, ETA ${eta}s)\n`);
    }
  };
  if (!opts.dryRun) {
    for (let i = 0; i < pending.length; i += batchSize) {
      const batch = pending.slice(i, i + batchSize);
      const body = await send(
        api,
        `${base}/api/ingest-batch`,
        token,
        batch.map((p) => p.item as ItemInput),
        retries,
        sleep,
        out,
      );
      for (const r of body.results) {
        if (r.status === 'stored') {
          stored++;
          changes[r.change]++;
        } else failed.push({ file: batch[r.index]?.file ?? '?', reason: r.message });
      }
      progress(Math.min(i + batchSize, pending.length));
    }
    if (out.isTTY) out.write('\n');
  }
  out.write(
    `ingest: ${files} files, ${load.items.length} items: ${changes.created} created, ${changes.updated} updated, ${changes.unchanged} unchanged, ${failed.length} failed${opts.dryRun ? ' (dry run)' : ''}\n`,
  );
  for (const f of failed) out.write(`  failed: ${f.file}: ${f.reason}\n`);
  return { files, stored, ...changes, failed, held };
}

/** `p` with `tag` among its tags (added once, case-insensitively). */
function withTag(p: LoadedItem, tag: string): LoadedItem {
  const tags = Array.isArray(p.item.tags) ? (p.item.tags as unknown[]) : [];
  const has = tags.some((t) => typeof t === 'string' && t.toLowerCase() === tag.toLowerCase());
  return has ? p : { ...p, item: { ...p.item, tags: [...tags, tag] } };
}

/**
 * The items to send, less those whose ids collide with another item of the folder (their own
 * `id`, else the slug of the title: "C++ tips" and "C tips" are both `c-tips`), which are reported
 * as failed with every item that shares the id. Sent, each would replace the one before, in one
 * batch refused by the service, across batches silently. Items that do not validate are sent as
 * they are: the service says what is wrong with them.
 */
export function withoutCollisions(items: readonly LoadedItem[]): {
  send: LoadedItem[];
  refused: Array<{ file: string; reason: string }>;
} {
  const perFile = new Map<string, number>();
  const named = items.map((p, position) => {
    const index = perFile.get(p.file) ?? 0;
    perFile.set(p.file, index + 1);
    const v = validateItem(p.item);
    return v.ok ? { position, index, file: p.file, title: v.item.title, id: v.item.id } : undefined;
  });
  const collisions = idCollisions(named.filter((n): n is NonNullable<typeof n> => n !== undefined));
  if (!collisions.length) return { send: [...items], refused: [] };
  const refusedAt = new Set<number>();
  const refused: Array<{ file: string; reason: string }> = [];
  for (const c of collisions) {
    const reason = `id "${c.id}" is shared by ${describeItems(c.items)}; none of them was sent (each would replace the one before): give each a distinct id or title`;
    for (const i of c.items) refused.push({ file: i.file ?? '?', reason });
  }
  const colliding = new Set(collisions.map((c) => c.id));
  for (const n of named) if (n && colliding.has(n.id)) refusedAt.add(n.position);
  return { send: items.filter((_, position) => !refusedAt.has(position)), refused };
}

/**
 * Sends one batch with the typed client (service/http/contract/client.ts): waits out a 429's
 * Retry-After, retries network errors and 5xx answers with backoff, stops on a refused token;
 * any other refusal without per-item results (a 413, a 400) stops the ingest.
 */
async function send(
  api: SearchClient,
  url: string,
  token: string | undefined,
  items: ItemInput[],
  retries: number,
  sleep: (ms: number) => Promise<void>,
  out: NodeJS.WritableStream,
): Promise<BatchOutcome> {
  return retrying(() => api.ingestBatch(items), url, token, retries, sleep, out);
}

/** `call` with the retries of `send`, for a delete or a listing page. */
function withRetries<T>(call: () => Promise<T>, opts: IngestOptions): Promise<T> {
  return retrying(
    call,
    baseOf(opts),
    tokenOf(opts),
    opts.retries ?? 4,
    opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))),
    opts.out ?? process.stderr,
  );
}

/** Runs `call`, waiting out 429s and retrying network errors and 5xx answers (see `send`). */
async function retrying<T>(
  call: () => Promise<T>,
  url: string,
  token: string | undefined,
  retries: number,
  sleep: (ms: number) => Promise<void>,
  out: NodeJS.WritableStream,
): Promise<T> {
  for (let attempt = 0; ;) {
    try {
      return await call();
    } catch (e) {
      if (!(e instanceof ApiError)) {
        if (attempt++ >= retries) {
          throw new IngestError(
            `cannot reach ${url} after ${retries + 1} tries (${e instanceof Error ? e.message : String(e)}); is the service running (make run)?`,
          );
        }
        await sleep(500 * 2 ** attempt);
        continue;
      }
      if (e.status === 429) {
        const wait = e.retryAfter ?? 1;
        out.write(`ingest: throttled (429), waiting ${wait}s as Retry-After asks\n`);
        await sleep(Math.max(wait, 0) * 1000);
        continue;
      }
      if (e.status === 401 || e.status === 403) {
        throw new IngestError(
          `${e.status} from ${url}: ${e.body.message ?? 'not allowed'}. ${token ? 'The token was refused: check --token or API_TOKEN.' : 'No token sent: pass --token or set API_TOKEN.'}`,
        );
      }
      if (e.status >= 500 && attempt++ < retries) {
        await sleep(500 * 2 ** attempt);
        continue;
      }
      throw new IngestError(
        `${e.status} from ${url}: ${e.body.message ?? (e.status >= 500 ? 'server error' : 'refused')}`,
      );
    }
  }
}

const USAGE =
  'usage: npm run ingest -- DIR [--url URL] [--token TOKEN] [--type article|project|experience] [--tag TAG] [--sections] [--prune] [--dry-run] [--delete ID...]';

/**
 * Parses `DIR [--url URL] [--token TOKEN] [--type TYPE] [--tag TAG] [--sections] [--prune]
 * [--dry-run] [--delete ID...]`: every argument after `--delete` up to the next option is an id;
 * DIR may be left out when the run only deletes.
 */
export function parseArgs(argv: readonly string[]): IngestOptions {
  let dir: string | undefined;
  const o: {
    url?: string;
    token?: string;
    type?: ItemType;
    dryRun?: boolean;
    sections?: boolean;
    prune?: boolean;
    tag?: string;
    delete?: string[];
  } = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--delete') {
      const ids = (o.delete ??= []);
      while (i + 1 < argv.length && !argv[i + 1].startsWith('--')) ids.push(argv[++i]);
      if (!ids.length) throw new IngestError('--delete needs at least one id');
    } else if (a === '--prune') o.prune = true;
    else if (a === '--tag') {
      const t = argv[++i];
      if (!t || t.startsWith('--')) throw new IngestError('--tag needs a tag');
      o.tag = t;
    } else if (a === '--url') o.url = argv[++i];
    else if (a === '--token') o.token = argv[++i];
    else if (a === '--type') {
      const t = argv[++i] as ItemType;
      if (!ITEM_TYPES.includes(t)) throw new IngestError(`--type ${t}: accepted: ${ITEM_TYPES.join(', ')}`);
      o.type = t;
    } else if (a === '--dry-run') o.dryRun = true;
    else if (a === '--sections') o.sections = true;
    else if (!a.startsWith('--') && !dir) dir = a;
    else throw new IngestError(`unknown argument ${a}`);
  }
  if (o.prune && !dir) throw new IngestError(`--prune mirrors a folder: give DIR. ${USAGE}`);
  if (!dir && !o.delete) throw new IngestError(USAGE);
  return { ...(dir ? { dir } : {}), ...o };
}

if (require.main === module) {
  (async () => {
    const summary = await ingestFolder(parseArgs(process.argv.slice(2)));
    // Ids of --delete not found are reported, not failures: deletes are idempotent.
    process.exit(summary.failed.length ? 1 : 0);
  })().catch((e: unknown) => {
    process.stderr.write(`ingest: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(e instanceof IngestError ? 2 : 1);
  });
}
