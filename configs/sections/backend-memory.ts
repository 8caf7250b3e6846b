/**
 * The backend container's memory and the V8 heap limit derived from it. Node sizes its old space
 * from the machine, not from the container: a replica whose heap may grow past the container's
 * limit is killed by the kernel (OOMKilled) instead of collecting garbage harder or failing one
 * allocation. So the chart sets `NODE_OPTIONS=--max-old-space-size=<heap>` from the container's
 * limit: `HEAP_SHARE` of it for the heap, the rest for what lives outside it, which for this
 * service is most of its memory: the search segment's and the content files' typed arrays and
 * Buffers (`external`/`arrayBuffers`), code, thread stacks and the GC's own headroom (measured in
 * BENCHMARKS.md, "Listings, tags and memory at 1M"; the sizing table is in README.md).
 */

/** The share of the container's memory limit given to the V8 heap (old space). */
export const HEAP_SHARE = 0.5;
/** The smallest heap the chart sets: below it a replica with any content collects garbage all the time. */
export const MIN_HEAP_MIB = 256;

const UNITS: Readonly<Record<string, number>> = { Ki: 1 / 1024, Mi: 1, Gi: 1024, Ti: 1024 * 1024 };

/** MiB of a memory quantity in binary units (`3Gi`, `512Mi`), or undefined for any other form. */
export function memoryMiB(quantity: string): number | undefined {
  const m = /^(\d+)(Ki|Mi|Gi|Ti)$/.exec(quantity);
  return m ? Number(m[1]) * UNITS[m[2]] : undefined;
}

/** The heap (`--max-old-space-size`, MiB) for a container memory limit of `limitMiB`. */
export function heapMiBFor(limitMiB: number): number {
  return Math.floor(limitMiB * HEAP_SHARE);
}

/**
 * What is wrong with a memory request and limit for the backend (quantities), or undefined: the
 * limit must be a binary quantity giving at least `MIN_HEAP_MIB` of heap, the request at most the
 * limit. Each message names the value.
 */
export function backendMemoryProblem(
  request: string,
  limit: string,
  names: { request: string; limit: string },
): { readonly which: 'request' | 'limit'; readonly message: string } | undefined {
  const l = memoryMiB(limit);
  const r = memoryMiB(request);
  if (l === undefined)
    return {
      which: 'limit',
      message: `${names.limit}=${limit} is not a memory quantity in Ki, Mi, Gi or Ti (e.g. 3Gi)`,
    };
  if (r === undefined)
    return {
      which: 'request',
      message: `${names.request}=${request} is not a memory quantity in Ki, Mi, Gi or Ti (e.g. 2Gi)`,
    };
  const heap = heapMiBFor(l);
  if (heap < MIN_HEAP_MIB) {
    const least = Math.ceil(MIN_HEAP_MIB / HEAP_SHARE);
    return {
      which: 'limit',
      message: `${names.limit}=${limit} is too small for the heap it sets: --max-old-space-size would be ${heap} MiB (${HEAP_SHARE * 100}% of the limit), below ${MIN_HEAP_MIB} MiB; give at least ${least}Mi`,
    };
  }
  if (r > l)
    return {
      which: 'request',
      message: `${names.request}=${request} is above ${names.limit}=${limit}; the request must not exceed the limit`,
    };
  return undefined;
}
