import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileContentStore } from '../../service/content/file-store/file-content-store';
import type { Item } from '../../service/content/item';
import { silentLogger } from '../../service/lib/logger';

/** A stored article titled by its id, dated 2026-01-01 (the content store suites' item). */
export function testItem(id: string, body: string): Item {
  return {
    id,
    type: 'article',
    title: id,
    body,
    tags: [],
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  };
}

/** Runs `fn` with a fresh temporary folder (named `<prefix>…`), removed after. */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `fn` with a FileContentStore in a fresh temporary folder; closes the store and removes the folder after. */
export async function withFileStore<T>(fn: (store: FileContentStore) => Promise<T>): Promise<T> {
  return withTempDir('file-store-', async (dir) => {
    const store = new FileContentStore({ dir, logger: silentLogger() });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  });
}

/**
 * What a writer killed mid-stream left: its items are named `b<batch>-<i>`, 20 a batch, and
 * every batch up to `acked` (the last it acknowledged) is there whole, and no batch partly.
 */
export function expectWholeBatches(items: readonly Item[], acked: number): void {
  const batches = new Map<number, number>();
  for (const i of items) {
    const b = Number(/^b(\d+)-/.exec(i.id)![1]);
    batches.set(b, (batches.get(b) ?? 0) + 1);
  }
  for (let b = 0; b <= acked; b++) expect(batches.get(b)).toBe(20);
  for (const n of batches.values()) expect(n).toBe(20);
}
