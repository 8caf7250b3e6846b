/** A typed array class that `grow` can reallocate. */
type TypedArray = Int32Array | Uint32Array | Uint16Array | Uint8Array | Float64Array;

/**
 * `arr` if it holds at least `n` elements, else a copy with room for at least `n` (doubling, so
 * appending one element at a time costs amortised O(1)).
 */
export function grow<A extends TypedArray>(arr: A, n: number): A {
  if (arr.length >= n) return arr;
  const next = new (arr.constructor as new (size: number) => A)(Math.max(n, arr.length * 2, 16));
  next.set(arr as never);
  return next;
}
