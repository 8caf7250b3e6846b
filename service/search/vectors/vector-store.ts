import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Logger } from 'pino';
import { CRC_STEP_BYTES } from '../../lib/framed-file';
import { readWholeFile } from '../../lib/read-whole-file';
import { writeAll } from '../../lib/write-all';
import { yieldToLoop } from '../../lib/yield-to-loop';
import { decodeVectors, encodeVectors, type GraphRef, VectorFileError } from './vector-file';
import { graphKeyOf } from './hnsw-graph';
import { VectorIndex, type VectorIndexOptions } from './vector-index';

/** Name of the vector file in its folder (beside the search segment, `search-segment.bin`). */
export const VECTOR_FILE = 'search-vectors.bin';
const GRAPH_PREFIX = 'search-vectors.';
const GRAPH_SUFFIX = '.usearch';

/** Options of `VectorStore`. */
export interface VectorStoreOptions {
  /** Folder of the files; created when missing (the search segment's folder). */
  readonly dir: string;
  readonly logger: Logger;
}

/** What a vector file is checked against: a file made otherwise is stale and not used. */
export interface VectorFileExpect {
  /** What the vectors are made with (model, dimensions). */
  readonly key: string;
  /** Fingerprint of the live content (the segment's `contentFingerprint` of its items' fingerprints). */
  readonly content: string;
}

/** An index read back or rebuilt, and from where. */
export interface LoadedVectors {
  readonly index: VectorIndex;
  /** `file`: the persisted index (`graph`: whether its graph file was used too); `rebuilt`: built again. */
  readonly from: 'file' | 'rebuilt';
  readonly graph: boolean;
}

/**
 * Where a vector index is kept between starts, beside the search segment and with its rules: two
 * files, `search-vectors.bin` (the items, their vectors and fingerprints, framed and checksummed:
 * vector-file.ts) and the HNSW graph in usearch's own format, `search-vectors.<generation>.usearch`,
 * whose name, length, CRC-32 and rows the `.bin` file's header records. A write saves the graph
 * under a new generation's name, then the `.bin` file to a temp file, fsynced, renamed over the old
 * one, the folder fsynced, and only then deletes older graphs: at any moment the `.bin` in place
 * names a whole graph. A `.bin` that is damaged, of another key or of other content is refused
 * and rebuilt, never served; a graph that does not match its record is rebuilt from the vectors.
 */
export class VectorStore {
  readonly file: string;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly opts: VectorStoreOptions) {
    this.file = join(opts.dir, VECTOR_FILE);
  }

  /**
   * Writes `index` (its state when the graph has been written) with `meta`; writes are done one
   * after the other. The graph is written by the library in its worker thread.
   */
  save(index: VectorIndex, meta: VectorFileExpect): Promise<void> {
    const dir = this.opts.dir;
    const run = async (): Promise<void> => {
      const started = performance.now();
      await mkdir(dir, { recursive: true });
      const generation = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
      const graphFile = `${GRAPH_PREFIX}${generation}${GRAPH_SUFFIX}`;
      const graphTmp = join(dir, `${graphFile}.tmp`);
      // The graph first (its worker thread writes it, after every change sent before), then the
      // snapshot, in the turn the graph's answer arrives: the snapshot holds every row the graph
      // does, and a row removed since is dead in it (a restore takes it out of the graph).
      const rows = await index.saveGraph(graphTmp);
      const snap = index.snapshot();
      let graph: GraphRef | null = null;
      if (rows !== undefined) {
        const { bytes, crc } = await crcOfFile(graphTmp);
        graph = { file: graphFile, key: index.graphKey, bytes, crc, rows };
        await syncFile(graphTmp);
        await rename(graphTmp, join(dir, graphFile));
      }
      const parts = await encodeVectors(snap, { ...meta, graph }, yieldToLoop);
      const tmp = `${this.file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
      try {
        const fh = await open(tmp, 'w');
        try {
          for (const p of parts) await writeAll(fh, p);
          await fh.sync();
        } finally {
          await fh.close();
        }
        await rename(tmp, this.file);
        await syncFile(dir);
      } catch (e) {
        await rm(tmp, { force: true });
        throw e;
      }
      for (const n of await readdir(dir))
        if (n !== graphFile && n.startsWith(GRAPH_PREFIX) && (n.endsWith(GRAPH_SUFFIX) || n.endsWith('.tmp')))
          await rm(join(dir, n), { force: true });
      this.opts.logger.info(
        { file: this.file, items: index.size, graph: graph?.file, ms: Math.round(performance.now() - started) },
        'vector index persisted',
      );
    };
    const done = this.writing.then(run);
    this.writing = done.catch(() => undefined);
    return done;
  }

  /**
   * The persisted index if it is whole and made with `expect` (its graph too when that matches),
   * else `rebuild()`'s (the reason logged). Never serves a stale or damaged file. `known`: the
   * items the caller holds, whose id strings the index keeps (`VectorIndex.restore`).
   */
  async load(
    expect: VectorFileExpect,
    options: VectorIndexOptions,
    rebuild: () => VectorIndex | Promise<VectorIndex>,
    known?: ReadonlyArray<{ readonly id: string }>,
  ): Promise<LoadedVectors> {
    const why = await this.read(expect, options, known);
    if (typeof why !== 'string') return why;
    this.opts.logger.warn({ file: this.file, reason: why }, `persisted vector index not used (${why}): rebuilding it`);
    return { index: await rebuild(), from: 'rebuilt', graph: false };
  }

  /** The persisted index, or why it cannot be used. */
  private async read(
    expect: VectorFileExpect,
    options: VectorIndexOptions,
    known: ReadonlyArray<{ readonly id: string }> | undefined,
  ): Promise<LoadedVectors | string> {
    // How long each step took (ms), logged: a slow start says where its time went.
    const steps: Record<string, number> = {};
    let at = performance.now();
    const step = (name: string) => {
      const now = performance.now();
      steps[name] = Math.round(now - at);
      at = now;
    };
    let buf: Buffer;
    try {
      // Into a SharedArrayBuffer: V8 does not count shared memory as the isolate's external memory,
      // and 1.5 GB of ArrayBuffer at 1M vectors (`Buffer.allocUnsafe`) started a mark-compact for
      // "external memory pressure" whose incremental steps held the loop for up to 181 ms.
      buf = await readWholeFile(this.file, (size) => Buffer.from(new SharedArrayBuffer(size)));
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'none yet' : `unreadable: ${(e as Error).message}`;
    }
    step('read');
    let decoded;
    try {
      decoded = await decodeVectors(buf, expect.key, yieldToLoop);
    } catch (e) {
      if (e instanceof VectorFileError) return e.message;
      throw e;
    }
    step('decode');
    const { snap, meta } = decoded;
    if (meta.content !== expect.content)
      return `stale: it holds content ${meta.content}, the live content is ${expect.content}`;
    if (snap.dims !== options.dims) return `made with ${snap.dims} dimensions, the index has ${options.dims}`;
    const graph = await this.graphOf(meta.graph, graphKeyOf(options.dims, options.graph));
    step('graphChecksum');
    if (typeof graph === 'string')
      this.opts.logger.warn({ file: this.file, reason: graph }, `vector graph not used (${graph}): rebuilding it`);
    const usable = typeof graph === 'string' ? undefined : graph;
    let index: VectorIndex;
    try {
      // The ids are parsed here (vector-file.ts, `IdLines`): a line that is not one is refused too.
      index = await VectorIndex.restore(options, snap, usable, known);
    } catch (e) {
      if (e instanceof VectorFileError) return e.message;
      throw e;
    }
    step('restore');
    this.opts.logger.info(
      { file: this.file, items: index.size, graph: usable !== undefined && index.hasGraph, steps },
      'persisted vector index read',
    );
    return { index, from: 'file', graph: usable !== undefined && index.hasGraph };
  }

  /** The graph file `ref` names, checked against it; undefined when there is none; or why not. */
  private async graphOf(
    ref: GraphRef | null,
    key: string,
  ): Promise<{ path: string; rows: number } | undefined | string> {
    if (!ref) return undefined;
    if (ref.key !== key) return `built with ${ref.key}, the index uses ${key}`;
    const path = join(this.opts.dir, ref.file);
    const size = await stat(path).then(
      (s) => s.size,
      () => -1,
    );
    if (size !== ref.bytes)
      return size < 0 ? `${ref.file} is missing` : `${ref.file} has ${size} bytes, not ${ref.bytes}`;
    const { crc } = await crcOfFile(path);
    if (crc !== ref.crc) return `${ref.file} is damaged: checksum mismatch`;
    return { path, rows: ref.rows };
  }

  /** Settles once the writes asked for are done. */
  async flush(): Promise<void> {
    await this.writing;
  }
}

/**
 * Length and CRC-32 of the file at `path`, read in steps of `CRC_STEP_BYTES` into one buffer (the
 * graph is ~0.9 KB a vector: at 1M vectors, reading it whole cost a second 0.9 GB beside the one
 * the library reads), a turn of the event loop between steps.
 */
async function crcOfFile(path: string): Promise<{ bytes: number; crc: number }> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(CRC_STEP_BYTES);
    let bytes = 0;
    let crc = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, bytes);
      if (bytesRead === 0) return { bytes, crc };
      crc = crc32(buf.subarray(0, bytesRead), crc);
      bytes += bytesRead;
      await yieldToLoop();
    }
  } finally {
    await fh.close();
  }
}

async function syncFile(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
