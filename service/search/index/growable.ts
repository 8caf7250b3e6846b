/** A typed array class that `grow` can reallocate. */
type TypedArray = Int32Array | Uint32Array | Uint16Array | Uint8Array | Float64Array;

/** `SharedArrayBuffer` with ES2024's `maxByteLength` option (Node 20 has it; the project's lib is ES2022). */
const GrowableShared = SharedArrayBuffer as unknown as new (
  length: number,
  options: { maxByteLength: number },
) => SharedArrayBuffer & { grow(length: number): void; readonly maxByteLength: number };

/**
 * Bytes from which `grow` moves an array into a buffer that grows in place. Below it a copy is
 * cheap and its garbage small (and a reservation of its own for every small array would not be).
 */
export const IN_PLACE_FROM_BYTES = 1 << 20;

/**
 * Address space reserved for each array that grows in place: the most V8 allows a shared buffer
 * (4 GiB; 1G entries of `fwdTerm`, ~25M documents of the Vaswani kind). Only reserved: pages are
 * committed as the buffer grows and take memory once written (RSS is what is used), and a
 * reservation of 400 × 4 GiB in one process made no difference to V8 or Linux.
 */
const RESERVE_BYTES = 2 ** 32;

/**
 * Per growable buffer, the one view that may grow it: the array `grow` last returned for it.
 * Other views of the buffer (a sealed index's `subarray`s, a merge's source, a stale copy of the
 * reference) never grow it, so no two writers append into the same bytes.
 */
const owners = new WeakMap<SharedArrayBuffer, TypedArray>();

/**
 * `arr` if it holds at least `n` elements, else an array with room for at least `n` (doubling,
 * so appending one element at a time costs amortised O(1)) holding `arr`'s elements first.
 *
 * From `IN_PLACE_FROM_BYTES` on, the room is made in place: the array moves once into a growable
 * shared buffer reserved at `RESERVE_BYTES`, which then grows without a copy; the new array is a
 * longer view of the same memory, the old one stays valid (never longer). A bulk load's doubled
 * forward arrays died as garbage whose pages a memory-reducing mark-compact freed on the event
 * loop's thread (~550 MiB, a 127 ms pause at 1M documents: issue 40); in place, nothing dies.
 * Like `untracked-arrays`' buffers, V8 counts none of it as external memory.
 */
export function grow<A extends TypedArray>(arr: A, n: number): A {
  if (arr.length >= n) return arr;
  const Ctor = arr.constructor as {
    new (size: number): A;
    new (buffer: SharedArrayBuffer, offset: number, length: number): A;
    readonly BYTES_PER_ELEMENT: number;
  };
  const size = Math.max(n, arr.length * 2, 16);
  const bytes = size * Ctor.BYTES_PER_ELEMENT;
  const buffer = arr.buffer as SharedArrayBuffer;
  if (owners.get(buffer) === arr && bytes <= (buffer as InstanceType<typeof GrowableShared>).maxByteLength) {
    (buffer as InstanceType<typeof GrowableShared>).grow(bytes);
    return own(new Ctor(buffer, 0, size));
  }
  if (bytes >= IN_PLACE_FROM_BYTES && bytes <= RESERVE_BYTES) {
    const next = own(new Ctor(new GrowableShared(bytes, { maxByteLength: RESERVE_BYTES }), 0, size));
    next.set(arr as never);
    return next;
  }
  const next = new Ctor(size);
  next.set(arr as never);
  return next;
}

/**
 * A zeroed array of `n` elements that `grow` grows in place: for a merge's new forward arrays,
 * which the index goes on appending to. Its memory is not written when allocated (a growable
 * shared buffer's pages are a fresh mapping, as `untracked-arrays`' `mapped`), so its pages are
 * faulted in by the steps that first write them. Below `IN_PLACE_FROM_BYTES`, a buffer of its own
 * size, as `mapped` makes.
 */
export function growable<A extends TypedArray>(
  Ctor: { new (buffer: SharedArrayBuffer, offset: number, length: number): A; readonly BYTES_PER_ELEMENT: number },
  n: number,
): A {
  const bytes = n * Ctor.BYTES_PER_ELEMENT;
  if (bytes < IN_PLACE_FROM_BYTES || bytes > RESERVE_BYTES)
    return new Ctor(new GrowableShared(bytes, { maxByteLength: bytes }), 0, n);
  return own(new Ctor(new GrowableShared(bytes, { maxByteLength: RESERVE_BYTES }), 0, n));
}

/** Registers `arr` as the view that grows its buffer. */
function own<A extends TypedArray>(arr: A): A {
  owners.set(arr.buffer as SharedArrayBuffer, arr);
  return arr;
}
