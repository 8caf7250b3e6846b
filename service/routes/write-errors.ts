import type { ItemIssue } from '../content/item';
import { StoreUnavailableError } from '../content/content-store';
import { HttpError } from '../http/errors';

/** 422 for an invalid item, naming the first bad field and listing every issue. */
export function invalidItem(issues: readonly ItemIssue[], where = ''): HttpError {
  const first = issues[0];
  const field = first?.field ?? '';
  return new HttpError(422, 'invalid_item', `${where}${field ? `${field}: ` : ''}${first?.message ?? 'invalid item'}`, {
    field,
    issues,
  });
}

/** Runs a store write; an unavailable store becomes 503 with the reason. */
export async function storeWrite<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (e instanceof StoreUnavailableError) throw new HttpError(503, 'store_unavailable', e.message);
    throw e;
  }
}
