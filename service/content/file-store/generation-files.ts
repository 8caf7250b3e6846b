/** The two files of a generation: the snapshot of everything, and the log appended after it. */
export type FileKind = 'snapshot' | 'log';

/** Generation `g`'s files in the folder: `content-<g>.snapshot` and `content-<g>.log`. */
export const GENERATION_FILE = /^content-(\d{1,12})\.(snapshot|log)$/;

/** The catalogue's file in the folder (content-catalogue.ts). */
export const CATALOGUE_FILE = 'content.catalogue';

/** The name of generation `gen`'s file of `kind`. */
export function generationFileName(gen: number, kind: FileKind): string {
  return `content-${gen}.${kind}`;
}
