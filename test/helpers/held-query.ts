import type { QueryGate } from '../../service/search/query-gate';
import { yieldToLoop } from '../../service/lib/yield-to-loop';

/**
 * A query that holds `gate` until `release()` (it has started once this settles), and a write
 * waiting for it that logs `write` when let in.
 */
export async function heldQueryAndWrite(
  gate: QueryGate,
  log: string[],
): Promise<{ query: Promise<void>; release: () => void; write: Promise<unknown> }> {
  let release!: () => void;
  const query = gate.run(() => new Promise<void>((resolve) => (release = resolve)));
  await yieldToLoop();
  const write = gate.quiet().then(() => log.push('write'));
  return { query, release, write };
}
