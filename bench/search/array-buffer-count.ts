/**
 * Bench-only preload (`node -r ./bench/search/array-buffer-count.ts`, after ts-node's register):
 * replaces the global typed-array constructors with subclasses that count every array made with
 * its own backing store (`new Float64Array(n)`, `Int32Array.from`, `.slice()`, `.map`, …; a view
 * on an existing buffer, `subarray` or `new Uint8Array(buf)`, is not counted), its bytes, and, one
 * in `ARRAY_BUFFER_SAMPLE` (16), the code site that made it (the first frame outside this file
 * and `node:` internals). For measuring how many backing stores a query makes and drops (V8's
 * `finish.sweep_array_buffers` at the mark-compacts). The subclasses change the arrays' maps, so
 * timings under this preload mean nothing.
 */
const SAMPLE = Number(process.env.ARRAY_BUFFER_SAMPLE ?? 16);

/** The counts since the last `reset()`. */
export interface ArrayBufferCounts {
  buffers: number;
  bytes: number;
  /** Of them, buffers of 64 kB or more and their bytes (freed by `munmap`, not a heap's free list). */
  large: number;
  largeBytes: number;
  /** Sampled sites: "file:line (function)" → sampled count × SAMPLE. */
  sites: Map<string, { buffers: number; bytes: number }>;
}

const counts: ArrayBufferCounts = { buffers: 0, bytes: 0, large: 0, largeBytes: 0, sites: new Map() };

function siteOf(): string {
  const stack = new Error().stack?.split('\n') ?? [];
  for (const line of stack.slice(2)) {
    if (
      line.includes('array-buffer-count') ||
      line.includes('untracked-arrays') ||
      line.includes('node:') ||
      line.includes('(<anonymous>)')
    )
      continue;
    return line
      .trim()
      .replace(/^at /, '')
      .replace(/\/work\/wt\/[^/]+\//, '');
  }
  return '?';
}

function note(bytes: number): void {
  counts.buffers++;
  counts.bytes += bytes;
  if (bytes >= 65_536) {
    counts.large++;
    counts.largeBytes += bytes;
  }
  if (counts.buffers % SAMPLE === 0) {
    const s = siteOf();
    const c = counts.sites.get(s) ?? { buffers: 0, bytes: 0 };
    c.buffers += SAMPLE;
    c.bytes += bytes * SAMPLE;
    counts.sites.set(s, c);
  }
}

const g = globalThis as unknown as Record<string, unknown>;
for (const name of [
  'Float64Array',
  'Float32Array',
  'Int32Array',
  'Uint32Array',
  'Int16Array',
  'Uint16Array',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'BigInt64Array',
  'BigUint64Array',
]) {
  const Base = g[name] as new (...args: unknown[]) => { byteLength: number };
  const Counted = class extends Base {
    constructor(...args: unknown[]) {
      super(...args);
      const a = args[0];
      if (!(a instanceof ArrayBuffer) && !(typeof SharedArrayBuffer !== 'undefined' && a instanceof SharedArrayBuffer))
        note(this.byteLength);
    }
  };
  Object.defineProperty(Counted, 'name', { value: name });
  g[name] = Counted;
}

// `SharedArrayBuffer`s (service/lib/untracked-arrays.ts: `i32`, `f64`, … and the pools): each
// has its own backing store and extension too; typed arrays over them are views, counted here.
{
  const Base = g.SharedArrayBuffer as new (...args: unknown[]) => { byteLength: number };
  const Counted = class extends Base {
    constructor(...args: unknown[]) {
      super(...args);
      note(this.byteLength);
    }
  };
  Object.defineProperty(Counted, 'name', { value: 'SharedArrayBuffer' });
  g.SharedArrayBuffer = Counted;
}

/** The counts so far; `reset()` zeroes them. */
export const arrayBufferCounts = {
  get: (): ArrayBufferCounts => counts,
  reset(): void {
    counts.buffers = 0;
    counts.bytes = 0;
    counts.large = 0;
    counts.largeBytes = 0;
    counts.sites = new Map();
  },
};
(g as { __arrayBufferCounts?: typeof arrayBufferCounts }).__arrayBufferCounts = arrayBufferCounts;
