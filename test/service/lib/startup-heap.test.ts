import { getHeapSpaceStatistics } from 'node:v8';
import { collectStartupGarbage } from '../../../service/lib/startup-heap';

/** Bytes in use in the young generation. */
function youngBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_used_size ?? 0;
}

describe('collectStartupGarbage', () => {
  it('moves what is kept out of the young generation, and leaves no gc function behind', () => {
    const hadGc = 'gc' in globalThis;
    // ~2 MB of small objects kept alive, as start-up's tables are.
    const kept = Array.from({ length: 50_000 }, (_, i) => ({ i, name: `entry-${i}` }));
    expect(youngBytes()).toBeGreaterThan(1_000_000);
    collectStartupGarbage();
    expect(youngBytes()).toBeLessThan(100_000);
    expect(kept[49_999].name).toBe('entry-49999');
    expect('gc' in globalThis).toBe(hadGc);
  });
});
