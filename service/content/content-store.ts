import type { Item } from './item';

/** Which store holds the content. */
export type StoreKind = 'file' | 'kvstore';

/** Items changed by another replica; the receiver re-reads them (absent = deleted). */
export interface RemoteChange {
  readonly ids: readonly string[];
  /**
   * The ids among `ids` that the change deleted, each with the deletion's stamp (ms): the receiver
   * drops those it reads as absent and holds at most as new as the stamp. An id read as absent
   * that the change did not delete (or that the receiver holds newer) was lost by the store: the
   * receiver keeps it, and its next reload writes it back.
   */
  readonly deleted?: Readonly<Record<string, number>>;
  /**
   * True when another replica wrote back deletions the store had lost (`restore`'s tombstones):
   * an id among them that this replica wrote back as lost was a deleted item, not a loss.
   */
  readonly restoredDeletions?: boolean;
}

/** What `ContentStore.restore` did with the items it was given. */
export interface RestoreOutcome {
  /** Ids that were absent and are written back now. */
  readonly written: readonly string[];
  /**
   * Ids not written back because the store holds a deletion of them at least as new as the item
   * (a replica that missed the delete): gone, the caller drops them.
   */
  readonly deleted: readonly string[];
}

/** Receiver of other replicas' writes. A rejected promise makes the store resync in full. */
export interface RemoteChangeHandlers {
  /** Re-read and apply these ids. */
  change(c: RemoteChange): Promise<void>;
  /** Reload everything (`load()` again): changes may have been missed. */
  resync(): Promise<void>;
}

/** Thrown when the store cannot take a write now (e.g. Redis is down); routes answer 503. */
export class StoreUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * How the store's background compaction is doing (the file store only): shown by `/health`,
 * counted in `svc_ai_search_content_compaction_failures_total`. A failed compaction never fails a
 * write; it leaves the previous files in use and is retried with backoff.
 */
export interface CompactionStatus {
  /** `failing` from a failed compaction until one succeeds. */
  readonly state: 'ok' | 'failing';
  /** Failed compactions since the process started. */
  readonly failures: number;
  /** Epoch ms of the last failure, if any. */
  readonly lastFailureAt?: number;
  /** The last failure's error code (`EACCES`, `ENOSPC`, ...) or name; no paths, no messages. */
  readonly lastError?: string;
  /** Epoch ms of the next attempt while failing. */
  readonly nextRetryAt?: number;
}

/**
 * Whether the store takes writes (the file store only): shown by `/health` (`content.writes`) and
 * the state set `svc_ai_search_content_write_state{state}`. A refused write stores nothing
 * (the log is cut back to its last whole record) and answers 503.
 * - `ok`: the last write succeeded, or none has failed since the start or since space returned;
 * - `disk_full`: the last write found no space (`ENOSPC`, `EDQUOT`); `ok` again with the next write
 *   that succeeds, or once the folder's file system has room for the refused write again;
 * - `failing`: the last write failed otherwise (`EIO`, `EROFS`, …); `ok` with the next success;
 * - `read_only`: a failed write could not be undone; every write is refused until a restart.
 */
export interface WriteStatus {
  readonly state: 'ok' | 'disk_full' | 'failing' | 'read_only';
  /** Refused writes since the process started. */
  readonly failures: number;
  /** Epoch ms of the last refused write, if any. */
  readonly lastFailureAt?: number;
  /** The last refused write's error code (`ENOSPC`, `EIO`, ...); no paths, no messages. */
  readonly lastError?: string;
}

/** Every `WriteStatus` state, for the state-set gauge (all always present). */
export const WRITE_STATES: readonly WriteStatus['state'][] = ['ok', 'disk_full', 'failing', 'read_only'];

/**
 * Durable home of the content. The in-memory copy and search index are rebuilt from it at
 * start and follow it afterwards: `write` for this process's writes, `onRemoteChange` for other
 * replicas' writes (shared stores only).
 *
 * `load` and `getMany` return items packed (`packItem`, lazy-item.ts), as the content service
 * holds them: the stores pack each record as they read it (the Redis store a page of its scan
 * at a time, the file store as it replays), and the content service takes them as they are. A
 * pass packing a reload's items in the service was a million look-ups through the packed items'
 * proxies in one turn at a million items, ~40 ms, even with every item packed already.
 */
export interface ContentStore {
  readonly kind: StoreKind;
  /** Opens the store and returns every item, packed. */
  load(): Promise<Item[]>;
  /**
   * Stores `items` (added, or replacing the item of their id) and deletes the items of `removed`,
   * all or nothing; once it resolves the write survives a crash, at the store's durability level.
   * An id is in at most one of the two; an id of `removed` the store does not hold is ignored.
   * Other replicas are told of both (a deleted id reads as absent: `RemoteChange`).
   */
  write(items: readonly Item[], removed?: readonly string[]): Promise<void>;
  /** Reads the current value of some ids (for remote changes), packed; absent ids are left out. */
  getMany(ids: readonly string[]): Promise<Item[]>;
  /**
   * Writes back items the store lost, each only if its id is still absent (so a newer write is
   * never overwritten) and not deleted since the item's `updated_at` (so a deleted item is never
   * written back), and tells the other replicas (shared stores only). Resolves with the ids
   * written (not those another writer had put back meanwhile) and the ids found deleted.
   */
  restore?(items: readonly Item[]): Promise<RestoreOutcome>;
  /** Registers the receiver of other replicas' changes (shared stores only). */
  onRemoteChange(handlers: RemoteChangeHandlers): void;
  /** State of background compaction (stores that compact: the file store). */
  compaction?(): CompactionStatus;
  /** Whether writes go through now (stores that write files: the file store). */
  writes?(): WriteStatus;
  /** The items' vectors (issue 41), kept beside them. */
  readonly vectors?: VectorRecords;
  /** Releases files and connections. */
  close(): Promise<void>;
}

/**
 * The vectors of one content version of one item, as a store keeps them (issue 41): valid only
 * while `fingerprint` is the item's current `itemFingerprint`, so a reader checks it against the
 * item and a stale record is never served.
 */
export interface VectorRecord {
  readonly id: string;
  /** `itemFingerprint` of the content version they were computed from. */
  readonly fingerprint: number;
  /** The embedder's key (`model/dimensions`), or `client` for an item's own `vector`. */
  readonly source: string;
  /**
   * `ItemPassages.textHash` of the texts embedded (empty for a client's vector): a later version
   * with the same texts (a tags-only change) takes these vectors without a provider call.
   */
  readonly textHash: string;
  /** One vector a passage, each of the same length. */
  readonly vectors: readonly Float32Array[];
}

/**
 * Where a store keeps the items' vectors (issue 41), beside the items: read at every start and
 * resync instead of embedding again, shared by every replica of a shared store. Records of deleted
 * items are removed by the store's delete (in its atomic write where it can; otherwise ignored by
 * readers, which match every record against the item's current fingerprint).
 */
export interface VectorRecords {
  /** Every record held (stale ones included: the reader matches fingerprints). */
  load(): Promise<VectorRecord[]>;
  /** The records of some ids; absent ids are left out. */
  getMany(ids: readonly string[]): Promise<VectorRecord[]>;
  /**
   * Stores each record only while its item is still at the version it was computed from (the
   * store holds the id with `updatedAt`): a slow embedding of an older version never replaces a
   * newer version's vectors. Other replicas are told (shared stores). Resolves with the ids written.
   */
  write(records: ReadonlyArray<{ readonly record: VectorRecord; readonly updatedAt: string }>): Promise<string[]>;
  /**
   * Claims the embedding of one item version for `leaseMs` (one replica embeds it, so it is billed
   * once); false when another holder's lease runs. A claim is not released on success (its lease
   * ends by itself), so a replica that looks a moment later finds the vectors, not a free claim.
   */
  claim(id: string, fingerprint: number, leaseMs: number): Promise<boolean>;
  /** Gives up a claim held here (the embedding failed), so another replica may take it at once. */
  release(id: string, fingerprint: number): Promise<void>;
  /** Registers the receiver of ids whose vectors another replica wrote (shared stores only). */
  onRemoteVectors(listener: (ids: readonly string[]) => void): void;
}
