import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FromGraph, GraphWorkerData, ToGraph } from './graph-protocol';

/** A search's answer from the graph: neighbour rows, their similarities, and the rows the graph had taken. */
export interface GraphFound {
  readonly keys: Float64Array;
  readonly scores: Float64Array;
  readonly upTo: number;
}

type Reply = Extract<FromGraph, { id: number }>;

/**
 * The service side of the HNSW graph's worker thread (hnsw-worker.ts): starts it, sends it rows,
 * removals, searches, saves and loads, and follows how far it has taken the rows (`upTo`). The
 * worker never keeps the process alive by itself (it is `unref`ed while nothing is asked of it).
 * When it fails or dies, `failed` says why, every pending request settles with `undefined` and
 * later ones too: the index answers by exact scan from then on; it never throws at its caller.
 */
export class GraphWorker {
  private readonly worker: Worker;
  private next = 1;
  private readonly waiting = new Map<number, (r: Reply | undefined) => void>();
  private sentUpTo = 0;
  private lastBlockGiven = -1;
  private upToNow = 0;
  private progressWaiters: Array<() => void> = [];
  private refed = false;
  private spareAsked = false;
  /** Why the worker no longer answers; undefined while it does. */
  failed: string | undefined;

  constructor(
    data: GraphWorkerData,
    private readonly onFailure: (reason: string) => void,
    private readonly onProgress: () => void,
    private readonly onSpare: (buffer: SharedArrayBuffer) => void = () => undefined,
  ) {
    this.worker = startWorker(data);
    this.worker.unref();
    this.worker.on('message', (m: FromGraph) => this.receive(m));
    this.worker.on('error', (e: Error) => this.fail(`the graph's worker thread failed: ${e.message}`));
    this.worker.on('exit', (code) => this.fail(`the graph's worker thread exited (code ${code})`));
  }

  /** Rows before this one have been taken by the graph (or skipped as removed). */
  get upTo(): number {
    return this.upToNow;
  }

  /** Rows before this one have been sent to the worker. */
  get sent(): number {
    return this.sentUpTo;
  }

  /** The block whose buffer the worker was handed last (blocks are handed in ascending order); −1 before. */
  get lastBlock(): number {
    return this.lastBlockGiven;
  }

  /** Hands the worker the shared buffer of block `block` (once, before any of its rows): shared, not copied. */
  block(block: number, buffer: SharedArrayBuffer): void {
    this.lastBlockGiven = block;
    if (!this.failed) this.send({ t: 'block', block, buffer });
  }

  /** Sends rows `from` to `end` (excluded, in one block the worker has) but `dead` (ascending). */
  add(from: number, end: number, dead: readonly number[]): void {
    this.sentUpTo = end;
    if (this.failed) return;
    this.send({ t: 'add', from, end, dead });
    this.updateRef();
  }

  /**
   * Asks the worker for a block's buffer with its pages touched, given to `onSpare` when it comes
   * (one asked at a time).
   */
  askSpare(): void {
    if (this.spareAsked || this.failed) return;
    this.spareAsked = true;
    this.send({ t: 'spare' });
  }

  /** Takes these rows out of the graph (now, or when they come). */
  remove(rows: readonly number[]): void {
    if (rows.length > 0 && !this.failed) this.send({ t: 'remove', rows });
  }

  /**
   * The graph's `fetch` neighbours of `query` (unit length), searched with `ef` candidates (the
   * graph's own when undefined); undefined when the worker has failed.
   */
  async search(query: Float32Array, fetch: number, ef?: number): Promise<GraphFound | undefined> {
    const r = await this.request((id) => ({ t: 'search', id, query, fetch, ef }));
    return r?.t === 'found' ? r : undefined;
  }

  /** Writes the graph to `path`; the rows it holds, or undefined when the worker failed. */
  async save(path: string): Promise<number | undefined> {
    const r = await this.request((id) => ({ t: 'save', id, path }));
    return r?.t === 'saved' ? r.upTo : undefined;
  }

  /** Reads a graph file of the first `rows` rows, then takes `dead` out of it; false when that failed. */
  async load(path: string, rows: number, dead: Float64Array): Promise<boolean> {
    const r = await this.request((id) => ({ t: 'load', id, path, rows, dead }), [dead.buffer as ArrayBuffer]);
    if (r?.t !== 'loaded') return false;
    this.sentUpTo = Math.max(this.sentUpTo, r.upTo);
    this.upToNow = Math.max(this.upToNow, r.upTo);
    return true;
  }

  /** Settles once the graph has taken every row sent so far, or the worker has failed. */
  async settle(): Promise<void> {
    while (!this.failed && this.upToNow < this.sentUpTo) await new Promise<void>((r) => this.progressWaiters.push(r));
  }

  /** Stops the worker (pending requests settle with undefined). */
  async close(): Promise<void> {
    this.fail('closed');
    await this.worker.terminate();
  }

  private request(make: (id: number) => ToGraph, transfer: ArrayBuffer[] = []): Promise<Reply | undefined> {
    if (this.failed) return Promise.resolve(undefined);
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.updateRef();
      this.send(make(id), transfer);
    });
  }

  private send(m: ToGraph, transfer: ArrayBuffer[] = []): void {
    try {
      this.worker.postMessage(m, transfer);
    } catch (e) {
      this.fail(`the graph's worker thread cannot be reached: ${(e as Error).message}`);
    }
  }

  private receive(m: FromGraph): void {
    if (m.t === 'progress') {
      this.upToNow = m.upTo;
      const waiters = this.progressWaiters;
      this.progressWaiters = [];
      for (const w of waiters) w();
      this.updateRef();
      this.onProgress();
      return;
    }
    if (m.t === 'spare') {
      this.spareAsked = false;
      this.onSpare(m.buffer);
      return;
    }
    if (m.t === 'failed' && m.id === undefined) {
      this.fail(`the graph's worker thread failed: ${m.message}`);
      return;
    }
    const resolve = m.id === undefined ? undefined : this.waiting.get(m.id);
    if (!resolve) return;
    this.waiting.delete(m.id!);
    this.updateRef();
    resolve(m.t === 'failed' ? undefined : m);
    if (m.t === 'failed' && m.id !== undefined) this.onFailure(`the graph's worker thread: ${m.message}`);
  }

  // Ref'ed while something is asked of it (rows not yet taken, a request not yet answered), so
  // that a process waiting for it does not exit; unref'ed otherwise.
  private updateRef(): void {
    const busy = !this.failed && (this.waiting.size > 0 || this.upToNow < this.sentUpTo);
    if (busy === this.refed) return;
    this.refed = busy;
    if (busy) this.worker.ref();
    else this.worker.unref();
  }

  private fail(reason: string): void {
    if (this.failed) return;
    this.failed = reason;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const r of waiting) r(undefined);
    const waiters = this.progressWaiters;
    this.progressWaiters = [];
    for (const w of waiters) w();
    this.updateRef();
    if (reason !== 'closed') this.onFailure(reason);
  }
}

/**
 * The worker thread, from the compiled `hnsw-worker.js` beside this file (the built package), or
 * from `hnsw-worker.ts` through ts-node's transpiler (ts-node, jest: the thread does not inherit
 * jest's transform).
 */
function startWorker(data: GraphWorkerData): Worker {
  const js = join(__dirname, 'hnsw-worker.js');
  if (existsSync(js)) return new Worker(js, { workerData: data });
  const ts = join(__dirname, 'hnsw-worker.ts');
  const boot = [
    `if (!process[Symbol.for('ts-node.register.instance')])`,
    `  require(${JSON.stringify(require.resolve('ts-node'))}).register({ transpileOnly: true });`,
    `require(${JSON.stringify(ts)});`,
  ].join('\n');
  return new Worker(boot, { eval: true, workerData: data });
}
