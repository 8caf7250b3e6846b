import type { ContentService } from '../../service/content/content-service';
import type { Item } from '../../service/content/item';

/** The parts of `ContentService` a delete uses (private there). */
interface DeleteInternals {
  readonly writesInFlight: Set<Promise<void>>;
  apply(items: readonly Item[], removed: readonly string[]): Promise<void>;
}

/**
 * Deletes `ids` through `content` exactly as issue 39's delete operation does (branch life-core:
 * `ContentService.write({ delete })`): one store write, tracked as in flight (a reload waits for
 * it), then the in-memory copy and its listeners follow. A stand-in for the tests of the shared
 * store's deletes until that operation is merged; then these tests call it instead.
 */
export async function deleteIds(content: ContentService, ids: readonly string[]): Promise<void> {
  const internals = content as unknown as DeleteInternals;
  const write = content.store.write([], ids);
  internals.writesInFlight.add(write);
  try {
    await write;
  } finally {
    internals.writesInFlight.delete(write);
  }
  await internals.apply([], ids);
}
