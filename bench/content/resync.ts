/**
 * The longest turn of the event loop during a content reload (`ContentService`'s resync) of `size`
 * small items (default 200,000), in-process: a store that hands back packed items as the real
 * stores do (their `load` has already run: the figure is the service's own work), and three
 * reloads in turn: the first load into an empty copy (`start`), a reload that finds every item
 * (`reload`: a replica after a fault), and a reload of a store that lost everything (`wiped`:
 * every item written back). A 1 ms timer reads the loop thread's CPU time (`loopThreadCpu`) at
 * each of its turns: the longest stretch between two is the longest turn the loop ran, counted
 * in CPU time (a core the process waited for does not count). Also the reload's CPU time in all,
 * and how many turns of the timer it spanned. No search index listens.
 *
 * Between the second and the third, the first `list('article')` (a page) and `all()` after the
 * start (`first`), after a reload of the same records as new items (`same`: a Redis blip), and
 * after one where `--changed` per million of the records changed (default 10,000: 1%), each with
 * the reload's own figures.
 *
 * `node --expose-gc -r ts-node/register/transpile-only bench/content/resync.ts [size] [--rounds n] [--changed m] [--no-wiped]`
 * (`--no-wiped`: without the last reload, for an older tree whose write-back bookkeeping was
 * quadratic in the items written back: 1.5 s at 200,000).
 */
import pino from 'pino';
import { ContentService } from '../../service/content/content-service';
import type { ContentStore, RemoteChangeHandlers, RestoreOutcome } from '../../service/content/content-store';
import type { Item } from '../../service/content/item';
import { packItem } from '../../service/content/lazy-item';
import { loopThreadCpu } from '../../service/metrics/event-loop-delay';

const TYPES = ['article', 'article', 'project', 'experience'] as const;

/** Item `n`, packed anew (as each read of a shared store makes its items); `version` > 0: changed, dated a month on. */
function item(n: number, version = 0): Item {
  const day = `2026-${String(((n + version) % 12) + 1).padStart(2, '0')}-${String((n % 28) + 1).padStart(2, '0')}`;
  return packItem({
    id: `item-${n}`,
    type: TYPES[n % 4],
    title: `Item ${n}`,
    body: version ? `Body of item ${n}, version ${version}.` : `Body of item ${n}.`,
    tags: [`Topic-${n % 50}`],
    date: day,
    created_at: `${day}T00:00:00.000Z`,
    updated_at: `${day}T00:00:00.000Z`,
  } as Item);
}

/** A store holding `items` (packed), which it hands back whole from `load`, a turn later. */
class HeldStore implements ContentStore {
  readonly kind = 'kvstore' as const;
  handlers: RemoteChangeHandlers | undefined;
  constructor(public items: readonly Item[]) {}
  async load(): Promise<Item[]> {
    await new Promise((r) => setImmediate(r));
    return this.items as Item[];
  }
  async write(): Promise<void> {}
  async getMany(): Promise<Item[]> {
    return [];
  }
  /** Every item written back, in calls of 1,000 items, a turn each (as the Redis store's `restore` does). */
  async restore(items: readonly Item[]): Promise<RestoreOutcome> {
    const written: string[] = [];
    for (let k = 0; k < items.length; k++) {
      if (k % 1000 === 0) await new Promise((r) => setImmediate(r));
      written.push(items[k].id);
    }
    return { written, deleted: [] };
  }
  onRemoteChange(handlers: RemoteChangeHandlers): void {
    this.handlers = handlers;
  }
  async close(): Promise<void> {}
}

interface Measured {
  readonly longestTurnMs: number;
  readonly cpuMs: number;
  readonly turns: number;
}

async function measured(work: () => Promise<void>): Promise<Measured> {
  (globalThis as { gc?: () => void }).gc?.();
  const cpu = loopThreadCpu();
  let last = cpu();
  let longest = 0;
  let turns = 0;
  const timer = setInterval(() => {
    const now = cpu();
    longest = Math.max(longest, now - last);
    last = now;
    turns++;
  }, 1);
  const start = cpu();
  await work();
  const end = cpu();
  clearInterval(timer);
  longest = Math.max(longest, end - last);
  const ms = (s: number) => Math.round(s * 1e4) / 10;
  return { longestTurnMs: ms(longest), cpuMs: ms(end - start), turns };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const size = Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000);
  const roundsAt = args.indexOf('--rounds');
  const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 3;
  const withWiped = !args.includes('--no-wiped');
  const changedAt = args.indexOf('--changed');
  const changedPerMillion = changedAt >= 0 ? Number(args[changedAt + 1]) : 10_000;
  const items = Array.from({ length: size }, (_, n) => item(n));
  for (let r = 0; r < rounds; r++) {
    const store = new HeldStore(items);
    const content = new ContentService(store, { now: () => Date.now() }, pino({ level: 'silent' }));
    const start = await measured(() => content.start());
    const reload = await measured(() => store.handlers!.resync());
    // The first listings after a start from a shared store (its items carry no catalogue rank): a
    // sort of every item, then the first listings after reloads of the same records, new items
    // each (`same`), and of records of which `changed` per million changed (`changed`).
    const listings = async () => ({
      list: await measured(async () => void content.list('article', { limit: 20, offset: 0 })),
      all: await measured(async () => void content.all()),
    });
    const first = await listings();
    store.items = Array.from({ length: size }, (_, n) => item(n));
    const same = { reload: await measured(() => store.handlers!.resync()), ...(await listings()) };
    store.items = Array.from({ length: size }, (_, n) => item(n, (n * 7919) % 1e6 < changedPerMillion ? 1 : 0));
    const changed = { reload: await measured(() => store.handlers!.resync()), ...(await listings()) };
    store.items = [];
    const wiped = withWiped ? await measured(() => store.handlers!.resync()) : undefined;
    if (content.size !== size) throw new Error(`held ${content.size} items, not ${size}`);
    console.log(JSON.stringify({ size, round: r + 1, start, reload, first, same, changed, wiped }));
  }
}

void main();
