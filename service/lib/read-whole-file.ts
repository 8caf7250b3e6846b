import { open } from 'node:fs/promises';

/**
 * The bytes of a file read with one `read` request of its whole size (looping only if the
 * kernel returns less), instead of `readFile`'s 512 KiB steps: each of those steps needs the
 * event loop to start the next, so a file read beside a long synchronous job (a start parsing
 * the content while the search segment is read) would wait for the job to end. Throws like
 * `readFile` (ENOENT, …). `alloc`: the buffer of the file's size to read into.
 */
export async function readWholeFile(
  path: string,
  alloc: (size: number) => Buffer = (size) => Buffer.allocUnsafe(size),
): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const buf = alloc(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await fh.read(buf, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === size ? buf : buf.subarray(0, at);
  } finally {
    await fh.close();
  }
}
