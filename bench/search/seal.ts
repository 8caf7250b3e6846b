/**
 * A bulk load's `seal()` (issue 40), in process: Vaswani grown to `size` (default 1,000,000),
 * analysed as the service analyses items (title, tags, text with positions), `load`ed into a
 * `CompactIndex`, then `seal()`ed in one step. Prints the CPU of the load and of the seal (the
 * process's: the seal runs on the calling thread, the GC's helpers count too), RSS before and
 * after the seal, and what a forced full collection after it then frees (RSS, and its CPU): the
 * garbage the build left behind, which in a service a memory-reducing mark-compact sweeps on the
 * event loop's thread (BENCHMARKS.md, issue 40, "sweep").
 *
 * `node --expose-gc -r ts-node/register/transpile-only bench/search/seal.ts [size]` (add
 * `--trace-gc` to see the collections).
 */
import { Analyzer } from '../../service/search/analysis/analyzer';
import { CompactIndex } from '../../service/search/index/compact-index';
import { growCorpus } from '../../tools/corpus/grow-corpus';
import { loadVaswani } from '../../tools/corpus/vaswani';
import { collectGarbage, requireExposedGc } from '../collect-garbage';

/** CPU ms of the process spent in `fn`. */
function cpu(fn: () => void): number {
  const at = process.cpuUsage();
  fn();
  const u = process.cpuUsage(at);
  return (u.user + u.system) / 1000;
}

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);

/** RSS and array buffers' bytes (ordinary and shared, live or not yet collected), in MiB. */
const memory = (): string => {
  const m = process.memoryUsage();
  return `RSS ${mib(m.rss)} / buffers ${mib(m.arrayBuffers)}`;
};

function main(): void {
  requireExposedGc();
  const size = Number(process.argv[2] ?? 1_000_000);
  const v = loadVaswani();
  const items = growCorpus(v.items, size);
  const a = new Analyzer();
  const c = new CompactIndex(['title', 'tags', 'text'], { positions: 'text' });
  const load = cpu(() => {
    for (const item of items) {
      const title = a.analyze(item.title);
      c.load(item.id, [title, [], [...title, ...a.analyze(item.body)]]);
    }
  });
  collectGarbage();
  const before = memory();
  const seal = cpu(() => c.seal());
  const sealed = memory();
  const full = cpu(() => collectGarbage());
  console.log(
    `seal.ts ${size.toLocaleString('en')} documents (${c.documentCount} live): load ${(load / 1000).toFixed(1)} s CPU; ` +
      `seal ${seal.toFixed(0)} ms CPU; MiB ${before} before it, ${sealed} after it, ` +
      `${memory()} after the full collection that follows (${full.toFixed(0)} ms CPU)`,
  );
}

main();
