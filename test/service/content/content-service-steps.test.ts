import pino from 'pino';
import { ManualClock } from '../../helpers/manual-clock';
import { ContentService } from '../../../service/content/content-service';
import type { ContentStore } from '../../../service/content/content-store';
import type { Item, ItemInput } from '../../../service/content/item';
import { packItem } from '../../../service/content/lazy-item';

/**
 * Issue 37, row 8: `ingestWithChanges` compares and stamps a write's items, and the in-memory copy takes
 * them, in steps of the event loop. Another write applied between two steps must not be
 * overwritten with a comparison made against the in-memory copy before it: the outcome is as if the
 * comparison ran in one step after that write.
 */

/** A store that keeps items in a map and hands them back packed; `gate`, when set, holds a write until it resolves. */
class MapStore implements ContentStore {
  readonly kind = 'file' as const;
  readonly items = new Map<string, Item>();
  gate: Promise<void> | undefined;
  async load(): Promise<Item[]> {
    return [...this.items.values()].map(packItem);
  }
  async write(items: readonly Item[]): Promise<void> {
    if (this.gate) await this.gate;
    for (const i of items) this.items.set(i.id, i);
  }
  async getMany(ids: readonly string[]): Promise<Item[]> {
    return ids.flatMap((id) => this.items.get(id) ?? []).map(packItem);
  }
  onRemoteChange(): void {}
  async close(): Promise<void> {}
}

function input(id: string, body: string): ItemInput & { id: string } {
  return { id, type: 'article', title: `Title ${id}`, body, tags: ['a'] } as ItemInput & { id: string };
}

/** A manual clock that tells when it is read (the write reads it once, as its stamping begins). */
class WatchedClock extends ManualClock {
  private waiting: Array<() => void> = [];
  read(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  override now(): number {
    for (const w of this.waiting.splice(0)) w();
    return super.now();
  }
}

describe('ContentService writes in steps', () => {
  it('an item another write stored while a large write was being stamped is compared again, against the in-memory copy of the end', async () => {
    const clock = new WatchedClock();
    const content = new ContentService(new MapStore(), clock, pino({ level: 'silent' }));
    await content.start();
    const big = Array.from({ length: 10_000 }, (_, i) => input(`item-${i}`, `Body ${i}`));
    const stamping = clock.read();
    const large = content.ingestWithChanges(big);
    // The large write has begun stamping (item-0 first); another write stores item-0 meanwhile.
    await stamping;
    clock.advance(1000);
    const [small] = await content.ingestWithChanges([input('item-0', 'Another body')]);
    expect(small.change).toBe('created');
    const results = await large;
    expect(results[0].change).toBe('updated');
    expect(results[0].item.created_at).toBe(small.item.created_at);
    expect(results[0].item.body).toBe('Body 0');
    expect(results.filter((r) => r.change === 'created')).toHaveLength(big.length - 1);
    expect(content.get('item-0')).toBe(results[0].item);
    expect(content.size).toBe(big.length);
  });

  it('an item another write stored before the large write compared it is left unchanged when equal', async () => {
    const clock = new WatchedClock();
    const content = new ContentService(new MapStore(), clock, pino({ level: 'silent' }));
    await content.start();
    const big = Array.from({ length: 10_000 }, (_, i) => input(`item-${i}`, `Body ${i}`));
    const stamping = clock.read();
    const large = content.ingestWithChanges(big);
    await stamping;
    clock.advance(1000);
    // The same content as the large write's last item, stored before that item is compared.
    const [small] = await content.ingestWithChanges([big[big.length - 1]]);
    const results = await large;
    const last = results[results.length - 1];
    expect(last.change).toBe('unchanged');
    expect(last.item).toBe(small.item);
  });
});
