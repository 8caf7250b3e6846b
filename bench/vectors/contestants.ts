/**
 * The approximate indexes bench/vectors/run.ts compares, behind one small interface: usearch
 * (f32 and f16 storage) and hnswlib-node, with the same graph parameters (16 links a node, 128
 * candidates while adding, 64 while searching). hnswlib-node is a bench-only package (it
 * compiles with node-gyp at install; bench/deps/index.ts): when it is not there its rows say so.
 */
import { Index, MetricKind, ScalarKind } from 'usearch';
import { requireBenchDependency } from '../deps';

/** Graph parameters shared by every contestant. */
export const GRAPH = { connectivity: 16, expansionAdd: 128, expansionSearch: 64 } as const;

/** One approximate index under test. */
export interface Contestant {
  /** Adds rows `from..to` of `matrix` under keys equal to their row numbers. */
  add(matrix: Float32Array, dims: number, from: number, to: number): void;
  /** Row keys of the `k` nearest to `q`. */
  search(q: Float32Array, k: number): number[];
  remove(keys: number[]): void;
  save(path: string): Promise<void>;
  /** A fresh index read from `path`; `view`: memory-mapped, when the library can. */
  load(path: string, view: boolean): Promise<Contestant>;
  /** The index in `path`, memory-mapped, searching with `ef` candidates (usearch only). */
  viewWithEf?(path: string, ef: number): Contestant;
}

/** Names of the contestants. */
export const CONTESTANTS = ['usearch-f32', 'usearch-f16', 'hnswlib-node'] as const;
export type ContestantName = (typeof CONTESTANTS)[number];

class Usearch implements Contestant {
  readonly index: Index;
  constructor(
    private readonly dims: number,
    private readonly quantization: ScalarKind,
    private readonly threads: number,
    ef: number = GRAPH.expansionSearch,
  ) {
    this.index = new Index({
      dimensions: dims,
      metric: MetricKind.IP,
      quantization,
      connectivity: GRAPH.connectivity,
      expansion_add: GRAPH.expansionAdd,
      expansion_search: ef,
      multi: false,
    });
  }
  add(matrix: Float32Array, dims: number, from: number, to: number): void {
    const keys = new BigUint64Array(to - from);
    for (let i = 0; i < keys.length; i++) keys[i] = BigInt(from + i);
    this.index.add(keys, matrix.subarray(from * dims, to * dims), this.threads);
  }
  search(q: Float32Array, k: number): number[] {
    const m = this.index.search(q, k, 1);
    return Array.from(m.keys, Number);
  }
  remove(keys: number[]): void {
    this.index.remove(BigUint64Array.from(keys, BigInt));
  }
  save(path: string): Promise<void> {
    this.index.save(path);
    return Promise.resolve();
  }
  load(path: string, view: boolean): Promise<Contestant> {
    const fresh = new Usearch(this.dims, this.quantization, this.threads);
    if (view) fresh.index.view(path);
    else fresh.index.load(path);
    return Promise.resolve(fresh);
  }
  viewWithEf(path: string, ef: number): Contestant {
    const fresh = new Usearch(this.dims, this.quantization, this.threads, ef);
    fresh.index.view(path);
    return fresh;
  }
}

interface HnswIndex {
  initIndex(o: { maxElements: number; m?: number; efConstruction?: number; randomSeed?: number }): void;
  setEf(ef: number): void;
  addPoint(p: number[] | Float32Array, label: number): void;
  markDelete(label: number): void;
  searchKnn(q: number[] | Float32Array, k: number, filter?: (l: number) => boolean): { neighbors: number[] };
  writeIndex(path: string): Promise<boolean>;
  readIndex(path: string): Promise<boolean>;
}

type HnswModule = { HierarchicalNSW: new (space: string, dims: number) => HnswIndex };

/** hnswlib-node, or why it cannot be used here. */
export function loadHnswlib(): HnswModule | string {
  const mod = requireBenchDependency<HnswModule>('hnswlib-node');
  return 'missing' in mod ? mod.missing : mod;
}

class Hnswlib implements Contestant {
  readonly index: HnswIndex;
  constructor(
    private readonly mod: HnswModule,
    private readonly dims: number,
    capacity: number,
  ) {
    this.index = new mod.HierarchicalNSW('ip', dims);
    if (capacity > 0)
      this.index.initIndex({
        maxElements: capacity,
        m: GRAPH.connectivity,
        efConstruction: GRAPH.expansionAdd,
        randomSeed: 100,
      });
    if (capacity > 0) this.index.setEf(GRAPH.expansionSearch);
  }
  add(matrix: Float32Array, dims: number, from: number, to: number): void {
    // The binding takes a plain array (a typed array is copied element by element in C++ too).
    for (let r = from; r < to; r++) this.index.addPoint(Array.from(matrix.subarray(r * dims, (r + 1) * dims)), r);
  }
  search(q: Float32Array, k: number): number[] {
    return this.index.searchKnn(Array.from(q), k).neighbors;
  }
  remove(keys: number[]): void {
    for (const k of keys) this.index.markDelete(k);
  }
  async save(path: string): Promise<void> {
    await this.index.writeIndex(path);
  }
  async load(path: string): Promise<Contestant> {
    const fresh = new Hnswlib(this.mod, this.dims, 0);
    await fresh.index.readIndex(path);
    fresh.index.setEf(GRAPH.expansionSearch);
    return fresh;
  }
}

/** A new, empty contestant (or why it cannot run here). */
export function makeContestant(name: ContestantName, dims: number, capacity: number): Contestant | string {
  if (name === 'usearch-f32') return new Usearch(dims, ScalarKind.F32, 2);
  if (name === 'usearch-f16') return new Usearch(dims, ScalarKind.F16, 2);
  const mod = loadHnswlib();
  return typeof mod === 'string' ? mod : new Hnswlib(mod, dims, capacity);
}
