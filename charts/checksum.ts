import { createHash } from 'node:crypto';

/**
 * Pod-template annotation value that changes whenever a mounted config changes, so
 * `kubectl apply` rolls the pods instead of leaving them on the old config.
 */
export function configChecksum(...documents: readonly string[]): string {
  const hash = createHash('sha256');
  for (const d of documents) hash.update(d).update('\0');
  return hash.digest('hex');
}

/** Annotation key of `configChecksum`. */
export const CONFIG_CHECKSUM_ANNOTATION = 'checksum/config';
