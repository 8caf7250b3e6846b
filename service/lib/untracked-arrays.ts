/**
 * Typed arrays over a `SharedArrayBuffer` instead of an `ArrayBuffer`, for the index's large or
 * frequent arrays: the query path's scratch and pooled arrays and a merge's new base arrays.
 *
 * Why: V8 counts every ordinary `ArrayBuffer`'s backing store as the isolate's external memory,
 * and 64 MB of it past the level at the last mark-compact starts incremental marking ("external
 * memory pressure") whose steps and final pause run on the event loop's thread; young ones also
 * force scavenges. At 1M documents a `delete_where` beside queries made several such full
 * collections, the longest turns of the loop (issue 39). A shared backing store is not counted
 * (its per-isolate accounting length is 0), so allocating it starts no collection.
 *
 * The trade-off: the memory is still freed only when its wrapper is collected, so nothing paces
 * the collector by these bytes any more; garbage ones wait for a collection that the JS heap's
 * own growth starts, and RSS may stand higher between collections. `process.memoryUsage()`'s
 * `external` no longer shows them. Contents start zeroed, as with `new Int32Array(n)`. Use these
 * only for arrays that stay on one thread (a shared buffer posted to a worker is shared, not
 * copied).
 *
 * Measured at 1M documents (BENCHMARKS.md, "Deletes at scale"): a `delete_where` of 100,000 with
 * queries beside it made no full collection in seven runs (3–4 with ordinary buffers), the merge
 * after it 2–3 (7–11); RSS peaked at 2.46–2.57 GB against 2.47 GB with ordinary buffers; the
 * query latency at 200k documents did not move (−0.6 % full, −1.5 % 2-word, in CPU time).
 */

/** A shared buffer of `n` elements of `bytes` bytes each. */
function shared(n: number, bytes: number): SharedArrayBuffer {
  return new SharedArrayBuffer(n * bytes);
}

/** A zeroed `Int32Array` of `n` elements, untracked by V8's external-memory accounting. */
export function i32(n: number): Int32Array {
  return new Int32Array(shared(n, 4));
}

/** A zeroed `Uint32Array` of `n` elements, untracked by V8's external-memory accounting. */
export function u32(n: number): Uint32Array {
  return new Uint32Array(shared(n, 4));
}

/** A zeroed `Uint16Array` of `n` elements, untracked by V8's external-memory accounting. */
export function u16(n: number): Uint16Array {
  return new Uint16Array(shared(n, 2));
}

/** A zeroed `Uint8Array` of `n` elements, untracked by V8's external-memory accounting. */
export function u8(n: number): Uint8Array {
  return new Uint8Array(shared(n, 1));
}

/** A zeroed `Float64Array` of `n` elements, untracked by V8's external-memory accounting. */
export function f64(n: number): Float64Array {
  return new Float64Array(shared(n, 8));
}

/** `SharedArrayBuffer` with ES2024's `maxByteLength` option (Node 20 has it; the project's lib is ES2022). */
const GrowableShared = SharedArrayBuffer as unknown as new (
  length: number,
  options: { maxByteLength: number },
) => SharedArrayBuffer;

/**
 * A shared buffer of exactly `n` elements of `bytes` bytes, growable (its maximum its length): V8
 * makes a growable buffer's memory as pages of its own (a fresh anonymous mapping, reserved and
 * committed), never through malloc, so it is zero without being written.
 */
function mappedBuffer(n: number, bytes: number): SharedArrayBuffer {
  const length = n * bytes;
  return new GrowableShared(length, { maxByteLength: length });
}

/**
 * The same arrays for a merge's large ones, over memory that is not written when it is allocated:
 * its pages are faulted in as the merge's passes first write them, in their steps.
 *
 * Why: `new SharedArrayBuffer(n)` is `calloc`, and glibc's calloc zeroes a block it serves from
 * its heap (not freshly mapped), writing every page in the allocating step. At 1M documents a
 * merge's allocations of 1–13 MB took 59–152 ms of the loop thread's CPU each, 3,076 page faults
 * for 13 MB (issue 39). Buffers padded to 32 MiB (glibc's largest mmap threshold) were still
 * zeroed whole now and then: three of 32 MiB took 166–173 ms of CPU and ~7,500 page faults each,
 * mostly system time, in one 1M merge (BENCHMARKS.md, "Deletes at scale", mrg). A growable
 * shared buffer's memory comes from V8's page allocator (`mmap`), whatever malloc's heap holds.
 * As with the other arrays here, V8 counts none of it as external memory.
 */
export const mapped = {
  i32: (n: number): Int32Array => new Int32Array(mappedBuffer(n, 4), 0, n),
  u32: (n: number): Uint32Array => new Uint32Array(mappedBuffer(n, 4), 0, n),
  u16: (n: number): Uint16Array => new Uint16Array(mappedBuffer(n, 2), 0, n),
  u8: (n: number): Uint8Array => new Uint8Array(mappedBuffer(n, 1), 0, n),
  f64: (n: number): Float64Array => new Float64Array(mappedBuffer(n, 8), 0, n),
};

/**
 * Bytes from which `sized` arrays are `mapped`: below it a calloc zeroed whole in its step costs
 * at most ~256 faults (~4 ms at the ~16 µs a fault measured at 1M), above it the query side's
 * pooled values of a common term's ~750k postings (6 MB) took 1,211 faults and 20.7 ms of the
 * loop thread's CPU in one step (BENCHMARKS.md, "Deletes at scale", cjob).
 */
export const MAPPED_FROM_BYTES = 1 << 20;

/**
 * Untracked arrays for a query's scratch and pooled arrays: `mapped` from `MAPPED_FROM_BYTES`
 * (their pages faulted in by the steps that first write them), plain untracked ones below it (a
 * mapping of its own for every small array would cost more than its zeroing).
 */
export const sized = {
  i32: (n: number): Int32Array => (n * 4 >= MAPPED_FROM_BYTES ? mapped.i32(n) : i32(n)),
  u16: (n: number): Uint16Array => (n * 2 >= MAPPED_FROM_BYTES ? mapped.u16(n) : u16(n)),
  f64: (n: number): Float64Array => (n * 8 >= MAPPED_FROM_BYTES ? mapped.f64(n) : f64(n)),
};
