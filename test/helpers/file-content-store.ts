import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileContentStore } from '../../service/content/file-content-store';
import { silentLogger } from '../../service/logger';

/** Runs `fn` with a FileContentStore in a fresh temporary folder; closes the store and removes the folder after. */
export async function withFileStore<T>(fn: (store: FileContentStore) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'file-store-'));
  const store = new FileContentStore({ dir, logger: silentLogger() });
  try {
    return await fn(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
