import { size } from '../parsers';
import { variable, type VariableSpec } from '../variables';

/** The embedded content store in `DATA_DIR` (the Redis store's key prefix is `kvstore.keyPrefix`). */
export interface ContentSettings {
  /**
   * Compact the store (write a snapshot, start a fresh log) once its log outgrows this and the
   * last snapshot, bytes. Smaller = faster restarts and less disk, more snapshot writes.
   * @default 8 MiB
   */
  readonly compactionBytes: number;
}

export const DEFAULT_CONTENT: ContentSettings = { compactionBytes: 8 * 1024 * 1024 };

export const CONTENT_VARIABLES: readonly VariableSpec[] = [
  variable(
    'CONTENT_COMPACTION_BYTES',
    'content.compactionBytes',
    size({ min: 1024 }),
    'Log size after which the DATA_DIR store compacts into a snapshot',
  ),
];
