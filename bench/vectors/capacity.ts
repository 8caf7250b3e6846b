/**
 * usearch's capacity doubling, measured (issue 41): `Index.add` reserves `ceil2(size + batch)`
 * when the batch does not fit, synchronously on the calling thread (javascript/lib.cpp
 * `CompiledIndex::Add` → `try_reserve`), and its JS binding has no `reserve()` to do it ahead. This
 * adds `total` tiny vectors (8 numbers, 8 candidates: the inserts cost next to nothing) in batches
 * of 256 on one thread and prints the wall and CPU time (process.cpuUsage) of each `add` that grew
 * the capacity: what one slice of the vector index's graph building costs at that size, whatever
 * the vectors' dimensions (the arrays reserved hold keys, slots and node pointers).
 *
 * `npx ts-node -T bench/vectors/capacity.ts [total]` (default 1,100,000).
 */
import { Index, MetricKind, ScalarKind } from 'usearch';

/** One capacity step: the size it happened at, the new capacity, wall and CPU ms of that `add`. */
export interface CapacityStep {
  readonly size: number;
  readonly capacity: number;
  readonly wallMs: number;
  readonly cpuMs: number;
}

/** Adds `total` vectors and returns the `add` calls that grew the capacity. */
export function measureCapacitySteps(total = 1_100_000): CapacityStep[] {
  const dims = 8;
  const batch = 256;
  const index = new Index({
    dimensions: dims,
    metric: MetricKind.IP,
    quantization: ScalarKind.F16,
    connectivity: 16,
    expansion_add: 8,
    expansion_search: 16,
    multi: false,
  });
  const vectors = new Float32Array(batch * dims);
  const keys = new BigUint64Array(batch);
  const steps: CapacityStep[] = [];
  for (let at = 0; at < total; at += batch) {
    for (let i = 0; i < vectors.length; i++) vectors[i] = Math.random() - 0.5;
    for (let i = 0; i < batch; i++) keys[i] = BigInt(at + i);
    const before = index.capacity();
    const cpu = process.cpuUsage();
    const started = performance.now();
    index.add(keys, vectors, 1);
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (index.capacity() !== before)
      steps.push({ size: at, capacity: index.capacity(), wallMs, cpuMs: (used.user + used.system) / 1000 });
  }
  return steps;
}

if (require.main === module) {
  const steps = measureCapacitySteps(Number(process.argv[2] ?? 1_100_000));
  process.stdout.write(
    [
      '| size | capacity after | wall ms | CPU ms |',
      '|---:|---:|---:|---:|',
      ...steps.map(
        (s) =>
          `| ${s.size.toLocaleString('en')} | ${s.capacity.toLocaleString('en')} | ${s.wallMs.toFixed(1)} | ${s.cpuMs.toFixed(1)} |`,
      ),
      '',
    ].join('\n'),
  );
}
