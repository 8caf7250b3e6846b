import { mulberry32 } from './grow-corpus';
/**
 * A clustered synthetic set of unit vectors, made from a seed (the same seed gives the same
 * vectors on every machine): `clusters` centres drawn from a standard normal, each vector a
 * centre plus normal noise of `spread`, normalised. Embeddings of real text are clustered like
 * this (topics), which is what approximate indexes are built for; a uniform set in 384
 * dimensions has no near neighbours to find. Shared by the vector index's tests and bench/.
 */

/** A standard normal number from `random` (Box–Muller). */
function normal(random: () => number): number {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/**
 * Clusters of a set of `count` vectors when not given: 1000, or `count / 5` when smaller. The
 * centres follow from the number of clusters (and `dims`), so queries drawn for a set must be
 * drawn with the set's number of clusters (`clusters: clustersFor(count)`): with their own default
 * (20 for 100 queries) they fall in none of the set's clusters, far from every vector, where the
 * nearest ten are near-ties (top-10 cosine ~0.19, the 101st ~0.16, at 100,000 vectors).
 */
export function clustersFor(count: number): number {
  return Math.max(1, Math.min(1000, Math.ceil(count / 5)));
}

/** Options of `clusteredVectors`. */
export interface ClusteredOptions {
  readonly count: number;
  readonly dims: number;
  readonly seed: number;
  /** @default clustersFor(count) */
  readonly clusters?: number;
  /** Standard deviation of a vector around its centre, against 1 for the centres. @default 0.6 */
  readonly spread?: number;
}

/** `count` unit vectors of `dims` numbers, one row after the other. */
export function clusteredVectors(opts: ClusteredOptions): Float32Array {
  const { count, dims, seed } = opts;
  const random = mulberry32(seed);
  const nc = Math.max(1, opts.clusters ?? clustersFor(count));
  const spread = opts.spread ?? 0.6;
  // Centres from a seed of their own: queries made with another seed fall in the same clusters.
  const centreRandom = mulberry32(0x5eed ^ dims ^ nc);
  const centres = new Float32Array(nc * dims);
  for (let i = 0; i < centres.length; i++) centres[i] = normal(centreRandom);
  const out = new Float32Array(count * dims);
  for (let r = 0; r < count; r++) {
    const c = Math.floor(random() * nc) * dims;
    let norm = 0;
    for (let i = 0; i < dims; i++) {
      const v = centres[c + i] + spread * normal(random);
      out[r * dims + i] = v;
      norm += v * v;
    }
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < dims; i++) out[r * dims + i] *= inv;
  }
  return out;
}
