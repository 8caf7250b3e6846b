/**
 * The add phase of the vector index alone (issue 41's floor "no event-loop stall over 50 ms while
 * vectors are added"): `count` clustered vectors of 384 dimensions added one item at a time, a
 * turn each 1,000 (as the feed hands a batch over), each item's vector its own `Float32Array` as
 * the feed holds them (or as `feedOf` says), the graph's worker building meanwhile. Measured inside the process: the
 * CPU time of the loop's thread in each turn (service/metrics/event-loop-delay.ts: a timer every
 * millisecond reads it), the longest per window of `count / 20` rows, every turn over 30 ms with
 * the rows added by then (to set beside `--trace-gc`'s lines: both count ms from the start), and
 * resident memory per vector: the feed's vectors, and the index's once the rows are added. It stops when
 * the add phase ends: the graph is not waited for.
 *
 * `node --expose-gc -r ts-node/register/transpile-only bench/vectors/add-stall.ts [count] [--dropped|--views]`
 * (default 100000; how the vectors are held: `feedOf`); add `--trace-gc` to node to see
 * the collector's pauses. Prints Markdown and appends it to bench/results/vectors.md.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loopThreadCpu } from '../../service/metrics/event-loop-delay';
import { VectorIndex } from '../../service/search/vectors';
import { clusteredVectors } from '../../tools/corpus/clustered-vectors';

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
/** Resident bytes after a full collection and a second for the freed buffers to be returned. */
const rss = async () => {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((r) => setTimeout(r, 1000));
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
};

/** How the vectors are held while they are added (`feedOf`). */
type FeedMode = 'held' | 'dropped' | 'views';

/**
 * The vectors as the feed hands them over: `held`, one array a vector, all kept (the service's
 * feed: its copy beside the index's rows); `dropped`, each vector's array made when it is added
 * and dropped after (the index's rows the one copy kept); `views`, views of the set's one array
 * (the index alone, as bench/vectors/room.ts adds them).
 */
function feedOf(count: number, dims: number, mode: FeedMode): (i: number) => Float32Array {
  const set = clusteredVectors({ count, dims, seed: 41 });
  if (mode === 'views') return (i) => set.subarray(i * dims, (i + 1) * dims);
  if (mode === 'dropped') return (i) => set.slice(i * dims, (i + 1) * dims);
  return heldFeed(Array.from({ length: count }, (_v, i) => set.slice(i * dims, (i + 1) * dims)));
}

/** Reads `held` (a closure of its own: one made in `feedOf` would keep the set's array alive too). */
const heldFeed =
  (held: readonly Float32Array[]) =>
  (i: number): Float32Array =>
    held[i];

/** Runs the add phase; returns its Markdown. */
export async function run(count = 100_000, mode: FeedMode = 'held'): Promise<string> {
  const dims = 384;
  const start = await rss();
  const feed = feedOf(count, dims, mode);
  const before = await rss();
  // The forced collections' sweeping ends before the turns are measured (it showed in the first ones).
  await new Promise((r) => setTimeout(r, 3000));
  const loadBefore = loadavg();
  const cpu = loopThreadCpu();
  const window = Math.max(1, Math.floor(count / 20));
  const windows: number[] = [];
  const long: string[] = [];
  let added = 0;
  let lastWall = performance.now();
  let lastCpu = cpu();
  const sampler = setInterval(() => {
    const wall = performance.now();
    const c = cpu();
    const turn = Math.min(c - lastCpu, (wall - lastWall) / 1000) * 1000;
    const w = Math.floor(added / window);
    windows[w] = Math.max(windows[w] ?? 0, turn);
    if (turn > 30) long.push(`${turn.toFixed(1)} ms at ${Math.round(wall)} ms (${added.toLocaleString('en')} rows)`);
    lastWall = wall;
    lastCpu = c;
  }, 1);
  const started = performance.now();
  const index = new VectorIndex({ dims });
  // The first thousand in a turn of its own: run from this timer's callback, it and the second
  // (in the same loop iteration's immediates) were measured as one turn of 2,000 adds.
  await new Promise((r) => setImmediate(r));
  for (let i = 0; i < count; i++) {
    index.add(`d${i}`, [feed(i)]);
    added = i + 1;
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  // The last chunks reach the worker.
  await new Promise((r) => setTimeout(r, 100));
  clearInterval(sampler);
  const addedS = (performance.now() - started) / 1000;
  const perVector = ((await rss()) - before) / count;
  const feedPerVector = (before - start) / count;
  const loadAfter = loadavg();
  index.close();
  const max = Math.max(...windows.filter((x) => x !== undefined));
  const md = [
    '',
    `### Adding ${count.toLocaleString('en')} × 384 to the VectorIndex (bench/vectors/add-stall.ts)`,
    '',
    `${new Date().toISOString().slice(0, 16)} UTC, load ${loadBefore} → ${loadAfter}. Added in ${addedS.toFixed(1)} s; the feed's vectors ${mode}.`,
    '',
    `- longest loop-thread CPU turn: **${max.toFixed(1)} ms**; per ${window.toLocaleString('en')} rows: ${windows.map((x) => (x ?? 0).toFixed(0)).join(', ')} ms`,
    `- turns over 30 ms: ${long.length ? long.join('; ') : 'none'}`,
    `- resident memory: the feed's vectors (${mode}) ${Math.round(feedPerVector)} B a vector; the index's rows and the graph built so far ${Math.round(perVector)} B a vector (${feed(0).length} numbers a vector)`,
    '',
  ].join('\n');
  appendFileSync(join(__dirname, '..', 'results', 'vectors.md'), md);
  return md;
}

if (require.main === module) {
  const mode = (['dropped', 'views'] as const).find((m) => process.argv.includes(`--${m}`)) ?? 'held';
  run(Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 100_000), mode)
    .then((md) => process.stdout.write(md))
    .catch((e: unknown) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    });
}
