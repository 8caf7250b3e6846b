/**
 * What `writeAll` needs of an open file: `FileHandle.write` in its buffer form (a fake in tests).
 */
export interface WritableFile {
  write(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position?: number | null,
  ): Promise<{ bytesWritten: number }>;
}

/**
 * Thrown when a write takes no bytes at all without an error (no file system should, but a loop
 * on it would never end). Its `code` is what health and logs show, as for an fs error.
 */
export class ShortWriteError extends Error {
  readonly code = 'ESHORTWRITE';
  constructor(
    readonly written: number,
    readonly length: number,
  ) {
    super(`the file took ${written} of ${length} bytes and then no more`);
    this.name = 'ShortWriteError';
  }
}

/**
 * Writes every byte of `data` or throws. One `write` may take only part of a buffer and return
 * the partial count without an error: a disk that fills mid-write does exactly that (libuv
 * stops at the first failing `write` and reports the bytes before it; the ENOSPC is not thrown).
 * A caller that trusts the count as "all of it" acknowledges a record that is not on disk. So
 * the rest is written again until done; on a full disk that next write throws the ENOSPC.
 * `position` (bytes from the file's start) is advanced with each part; without it each part goes
 * at the file's current position (an append for a file opened with `'a'`).
 */
export async function writeAll(file: WritableFile, data: Uint8Array, position?: number): Promise<void> {
  let at = 0;
  while (at < data.length) {
    const { bytesWritten } = await file.write(
      data,
      at,
      data.length - at,
      position === undefined ? null : position + at,
    );
    if (!(bytesWritten > 0)) throw new ShortWriteError(at, data.length);
    at += bytesWritten;
  }
}
