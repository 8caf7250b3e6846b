import type { Logger } from 'pino';
import { stepper } from '../lib/yield-to-loop';
import type { ContentChange, ContentService } from '../content/content-service';
import type { VectorRecord, VectorRecords } from '../content/content-store';
import type { Item } from '../content/item';
import { itemFingerprint } from '../content/item-fingerprint';
import { itemPassages, type ItemPassages } from './passages';
import { EmbeddingError, type Embedder } from './types';
import type { ItemVectors, SemanticStatus, VectorFeed, VectorFeedListener } from './vector-feed';

/** The `source` of an item's own `vector`. */
export const CLIENT_SOURCE = 'client';

/** Options of `StoredVectorFeed`. */
export interface StoredVectorFeedOptions {
  readonly content: ContentService;
  /** Where the vectors are kept (`ContentStore.vectors`); without it nothing is kept or embedded. */
  readonly records?: VectorRecords;
  /** Embeds items without a vector of their own; absent (`EMBEDDINGS_PROVIDER=none`): client vectors only. */
  readonly embedder?: Embedder;
  /** Passages an item at most (`EMBEDDINGS_MAX_PASSAGES`). */
  readonly maxPassages: number;
  /** Length of every vector (`EMBEDDINGS_DIMENSIONS`): a stored record of another length is stale. */
  readonly dimensions: number;
  readonly logger: Logger;
  /** How long a claim of an item version holds another replica off it (`EMBEDDINGS_CLAIM_LEASE_MS`). @default 300_000 */
  readonly leaseMs?: number;
  /** Items a round of the worker takes. @default 16 */
  readonly batchItems?: number;
  /** Wait after a failed provider call, doubling while it fails. @default { initialMs: 1000, maxMs: 60_000 } */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
}

/**
 * The content side of search by meaning (issue 41): the current vectors of the stored items, read
 * from the store (`VectorRecords`) at the start and after every resync, and a worker that gives
 * vectors to items whose current version has none, in the background, once per content version
 * across replicas:
 *
 * - an item with its own `vector`: that vector (`source: client`), no provider call;
 * - an item whose record is of an older version but the same passages (`textHash`: a change of
 *   tags or dates only): that record's vectors, no provider call;
 * - else, with an embedder, it claims the version in the store (`claim`: one replica embeds it,
 *   so it is billed once), embeds its passages (`itemPassages`), and writes the record, which the
 *   store keeps only while the item is still at that version. A replica that finds the claim
 *   taken looks again a little later: by then the holder's record has arrived (its notice, or the
 *   read before claiming), or its lease has run out (it crashed) and this replica claims it.
 *
 * A failed provider call leaves the items in the backlog (`pending()`), marks the feed `degraded`
 * (while its backlog is not empty: other replicas' records may drain it) and waits (doubling,
 * `backoff`) before trying again; writes never wait for any of this.
 */
export class StoredVectorFeed implements VectorFeed {
  private readonly held = new Map<string, ItemVectors>();
  private readonly listeners = new Set<VectorFeedListener>();
  /** Items whose current vectors are missing, each with the time (ms) before which the worker leaves it. */
  private readonly todo = new Map<string, number>();
  private readonly source: string | undefined;
  private readonly leaseMs: number;
  private readonly batchItems: number;
  private readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  private waitMs: number;
  private failing = false;
  /** After a failed provider call: the worker embeds nothing before this time (ms). */
  private resumeAt = 0;
  /**
   * Items of a batch the provider refused as such (a 4xx, an answer not of the vectors asked):
   * perhaps one item's fault, so each is embedded alone from then on, and the rest of the backlog
   * is not held up by it.
   */
  private readonly alone = new Set<string>();
  private closed = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private reloads: Promise<void> = Promise.resolve();
  /** Ids a content change named while a reload ran in steps: the change's decision stands for them. */
  private touched: Set<string> | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly opts: StoredVectorFeedOptions) {
    this.source = opts.embedder ? `${opts.embedder.model}/${opts.embedder.dimensions}` : undefined;
    this.leaseMs = opts.leaseMs ?? 300_000;
    this.batchItems = opts.batchItems ?? 16;
    this.backoff = opts.backoff ?? { initialMs: 1000, maxMs: 60_000 };
    this.waitMs = this.backoff.initialMs;
  }

  current(): Iterable<ItemVectors> {
    return [...this.held.values()];
  }

  subscribe(listener: VectorFeedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  pending(): number {
    return this.opts.embedder ? this.todo.size : 0;
  }

  status(): SemanticStatus {
    // Degraded while something waits on a failed provider: a backlog that drained (other replicas'
    // records arrived for every item) waits on nothing, whatever this replica's last call did.
    if (this.opts.embedder) return this.failing && this.todo.size > 0 ? 'degraded' : 'ok';
    return this.held.size ? 'ok' : 'off';
  }

  /**
   * Reads the stored vectors of the loaded content and starts the worker; call after the content
   * service started. Changes of the content and other replicas' vectors are followed from here on.
   */
  async start(): Promise<void> {
    if (!this.opts.records) return;
    this.opts.content.onChange(async (change) => this.onContent(change));
    this.opts.records.onRemoteVectors((ids) => void this.heard(ids));
    await this.reload();
    this.loop = this.run();
  }

  /** Stops the worker (an embedding under way is aborted; its items stay in the store's backlog). */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort(new Error('the vector feed is closing'));
    this.wake?.();
    await this.loop;
    await this.reloads.catch(() => undefined);
  }

  /** Whether `r` may serve as the vectors of a version now: a client's, or this embedder's of the right length. */
  private usable(r: VectorRecord): boolean {
    if (r.vectors.length === 0 || r.vectors.some((v) => v.length !== this.opts.dimensions)) return false;
    return r.source === CLIENT_SOURCE || r.source === this.source;
  }

  private put(vectors: ItemVectors[]): void {
    if (!vectors.length) return;
    for (const v of vectors) this.held.set(v.id, v);
    for (const l of this.listeners) l.put(vectors);
  }

  private remove(ids: string[]): void {
    if (!ids.length) return;
    for (const l of this.listeners) l.remove(ids);
  }

  private static vectorsOf(r: VectorRecord, fingerprint: number): ItemVectors {
    return { id: r.id, fingerprint, source: r.source, vectors: r.vectors };
  }

  /**
   * Every held item matched against the stored records (at the start, and after a resync: the
   * content may have changed while this replica was not listening).
   */
  private reload(): Promise<void> {
    this.reloads = this.reloads.then(async () => {
      let stored: VectorRecord[] = [];
      try {
        stored = await this.opts.records!.load();
      } catch (e) {
        this.opts.logger.warn(
          { err: (e as Error).message },
          'could not read the stored vectors; embedding what lacks them',
        );
      }
      // Every pass over the records or the items in steps of the event loop (a million of either
      // is a pass of its own); a content change applied meanwhile decides for the ids it names
      // (`touched`), the passes for the others.
      const touched = (this.touched = new Set<string>());
      const step = stepper();
      let s: Promise<void> | undefined;
      const byId = new Map<string, VectorRecord>();
      const put: ItemVectors[] = [];
      const seen = new Set<string>();
      try {
        for (const r of stored) {
          byId.set(r.id, r);
          if ((s = step())) await s;
        }
        // The items in no order: a listing (`all()`) would sort every item at a start from Redis first.
        for (const item of this.opts.content.each()) {
          seen.add(item.id);
          if ((s = step())) await s;
          if (touched.has(item.id)) continue;
          const fp = itemFingerprint(item);
          if (this.held.get(item.id)?.fingerprint === fp) continue;
          const r = byId.get(item.id);
          if (r && r.fingerprint === fp && this.usable(r)) {
            put.push(StoredVectorFeed.vectorsOf(r, fp));
            this.todo.delete(item.id);
          } else if (this.mayGetVectors(item)) this.todo.set(item.id, 0);
          else this.todo.delete(item.id);
        }
        const gone: string[] = [];
        for (const id of this.held.keys()) {
          if (!seen.has(id) && !touched.has(id)) gone.push(id);
          if ((s = step())) await s;
        }
        for (const id of this.todo.keys()) {
          if (!seen.has(id) && !touched.has(id)) this.todo.delete(id);
          if ((s = step())) await s;
        }
        // The decisions land in one turn, with the changes applied meanwhile left as they decided.
        const fresh = put.filter((v) => !touched.has(v.id));
        const left = gone.filter((id) => !touched.has(id));
        for (const id of left) this.held.delete(id);
        this.remove(left);
        this.put(fresh);
      } finally {
        this.touched = undefined;
      }
      this.wake?.();
    });
    return this.reloads;
  }

  private async onContent(change: ContentChange): Promise<void> {
    if (change.reset) {
      // Not awaited: the resync's write waits for no store read of vectors.
      void this.reload();
      return;
    }
    const stale: string[] = [];
    for (const id of change.removed) this.touched?.add(id);
    for (const item of change.upserted) this.touched?.add(item.id);
    for (const id of change.removed) {
      this.todo.delete(id);
      this.alone.delete(id);
      if (this.held.delete(id)) stale.push(id);
    }
    for (const item of change.upserted) {
      const h = this.held.get(item.id);
      if (h && h.fingerprint === itemFingerprint(item)) continue;
      if (h) {
        this.held.delete(item.id);
        stale.push(item.id);
      }
      if (this.mayGetVectors(item)) this.todo.set(item.id, 0);
      else this.todo.delete(item.id);
    }
    this.remove(stale);
    if (change.upserted.length) this.wake?.();
  }

  /** Another replica stored vectors of `ids`: those of the versions held here are taken. */
  private async heard(ids: readonly string[]): Promise<void> {
    let records: VectorRecord[];
    try {
      records = await this.opts.records!.getMany(ids);
    } catch {
      return; // The worker reads them itself when it comes to these items.
    }
    const put: ItemVectors[] = [];
    for (const r of records) {
      const item = this.opts.content.get(r.id);
      if (!item || itemFingerprint(item) !== r.fingerprint || !this.usable(r)) continue;
      put.push(StoredVectorFeed.vectorsOf(r, r.fingerprint));
      this.todo.delete(r.id);
    }
    this.put(put);
  }

  /**
   * Whether the worker can give `item` vectors: with an embedder every item, else only one with
   * its own `vector` (another replica's record of it arrives by its notice, `heard`). Without
   * this, a batch of 10,000 items with no embedder went through the worker's rounds for nothing.
   */
  private mayGetVectors(item: Item): boolean {
    return this.opts.embedder !== undefined || item.vector !== undefined;
  }

  private async run(): Promise<void> {
    // Rounds whose store reads resolve at once (the file store) would otherwise follow each other
    // in one turn of the event loop: a backlog of thousands of items held it for tens of ms.
    const step = stepper();
    while (!this.closed) {
      const s = step();
      if (s) {
        await s;
        // Closed meanwhile: its wake-up was for a wait this loop had not begun.
        if (this.closed) break;
      }
      const now = Date.now();
      if (now < this.resumeAt) {
        await this.sleep(this.resumeAt - now);
        continue;
      }
      const batch: string[] = [];
      let next = Infinity;
      for (const [id, notBefore] of this.todo) {
        if (notBefore > now) next = Math.min(next, notBefore);
        else if (!this.alone.has(id)) batch.push(id);
        else if (!batch.length) {
          batch.push(id);
          break;
        }
        if (batch.length >= this.batchItems) break;
      }
      if (!batch.length) {
        if (!this.todo.size) {
          // Nothing waits on the provider: the next failure is a new outage (warned, backed off from the start).
          this.failing = false;
          this.waitMs = this.backoff.initialMs;
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          if (next !== Infinity) setTimeout(resolve, next - now).unref();
        });
        this.wake = undefined;
        continue;
      }
      try {
        await this.round(batch);
      } catch (e) {
        // The store could not be read or written: the items stay, tried again after a wait.
        this.opts.logger.warn({ err: (e as Error).message }, 'vector worker: the store failed; trying again later');
        this.later(batch, this.waitMs);
        await this.sleep(this.waitMs);
      }
    }
  }

  private later(ids: readonly string[], ms: number): void {
    const at = Date.now() + ms;
    for (const id of ids) if (this.todo.has(id)) this.todo.set(id, at);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      setTimeout(resolve, ms).unref();
    }).then(() => {
      this.wake = undefined;
    });
  }

  /** One round of the worker over `ids` (see the class comment). */
  private async round(ids: readonly string[]): Promise<void> {
    const records = this.opts.records!;
    const items: Array<{ item: Item; fp: number }> = [];
    for (const id of ids) {
      const item = this.opts.content.get(id);
      const fp = item && itemFingerprint(item);
      if (!item || this.held.get(id)?.fingerprint === fp) this.todo.delete(id);
      else items.push({ item, fp: fp! });
    }
    if (!items.length) return;
    const stored = new Map((await records.getMany(items.map((x) => x.item.id))).map((r) => [r.id, r]));
    const adopt: ItemVectors[] = [];
    const toWrite: Array<{ record: VectorRecord; item: Item }> = [];
    const toEmbed: Array<{ item: Item; fp: number; passages: ItemPassages }> = [];
    for (const { item, fp } of items) {
      const r = stored.get(item.id);
      if (r && r.fingerprint === fp && this.usable(r)) {
        adopt.push(StoredVectorFeed.vectorsOf(r, fp));
        this.todo.delete(item.id);
      } else if (item.vector) {
        const vectors = [Float32Array.from(item.vector)];
        toWrite.push({ item, record: { id: item.id, fingerprint: fp, source: CLIENT_SOURCE, textHash: '', vectors } });
      } else if (!this.opts.embedder) {
        this.todo.delete(item.id); // Searched by keyword only: nothing to wait for.
      } else {
        const passages = itemPassages(item, this.opts.maxPassages);
        if (r && r.source === this.source && r.textHash === passages.textHash && this.usable(r)) {
          toWrite.push({ item, record: { ...r, fingerprint: fp } });
        } else if (await records.claim(item.id, fp, this.leaseMs)) {
          toEmbed.push({ item, fp, passages });
        } else {
          // Another replica embeds this version: its record arrives by its notice, or is read here next time.
          this.later([item.id], Math.min(this.leaseMs, 2000));
        }
      }
    }
    this.put(adopt);
    if (toEmbed.length) await this.embed(toEmbed, toWrite);
    if (!toWrite.length) return;
    const written = new Set(
      await records.write(toWrite.map(({ record, item }) => ({ record, updatedAt: item.updated_at }))),
    );
    const put: ItemVectors[] = [];
    for (const { record, item } of toWrite) {
      const now = this.opts.content.get(item.id);
      if (!now || itemFingerprint(now) !== record.fingerprint) continue; // changed meanwhile: todo again
      if (written.has(record.id)) {
        put.push(StoredVectorFeed.vectorsOf(record, record.fingerprint));
        this.todo.delete(record.id);
      } else {
        // The store holds another version (its change is on its way here): looked at again shortly.
        this.later([record.id], 1000);
      }
    }
    this.put(put);
  }

  /** Embeds the passages of `jobs` in one call (the embedder batches it); their records join `out`. */
  private async embed(
    jobs: ReadonlyArray<{ item: Item; fp: number; passages: ItemPassages }>,
    out: Array<{ record: VectorRecord; item: Item }>,
  ): Promise<void> {
    const texts = jobs.flatMap((j) => j.passages.passages);
    try {
      const { vectors } = await this.opts.embedder!.embed(texts, { signal: this.abort.signal });
      this.failing = false;
      this.waitMs = this.backoff.initialMs;
      for (const { item } of jobs) this.alone.delete(item.id);
      let at = 0;
      for (const { item, fp, passages } of jobs) {
        const n = passages.passages.length;
        const record = { id: item.id, fingerprint: fp, source: this.source!, textHash: passages.textHash };
        out.push({ item, record: { ...record, vectors: vectors.slice(at, at + n) } });
        at += n;
      }
    } catch (e) {
      if (this.closed) return;
      if (!this.failing)
        this.opts.logger.warn(
          { err: (e as Error).message, items: jobs.length },
          'embedding failed; the items stay in the backlog (embeddings_pending) and are tried again with backoff',
        );
      this.failing = true;
      const reason = e instanceof EmbeddingError ? e.reason : undefined;
      if (reason === 'client_error' || reason === 'invalid_answer' || reason === 'too_large') {
        // Not the provider's state but what was sent: each item alone next (at once), and an item
        // refused alone waits the longest backoff, behind the rest of the backlog.
        const at = jobs.length > 1 ? 0 : Date.now() + this.backoff.maxMs;
        for (const { item } of jobs) {
          this.alone.add(item.id);
          this.todo.delete(item.id);
          this.todo.set(item.id, at);
        }
      } else {
        const wait = this.waitMs;
        this.waitMs = Math.min(this.backoff.maxMs, this.waitMs * 2);
        this.resumeAt = Date.now() + wait;
      }
      await Promise.allSettled(jobs.map((j) => this.opts.records!.release(j.item.id, j.fp)));
    }
  }
}
