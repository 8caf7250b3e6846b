import { createHash } from 'node:crypto';
import type { Item } from '../content/item';
import { itemFingerprint } from '../content/item-fingerprint';
import { plainTextOf } from '../content/plain-text';
import { packSentences, PASSAGE_CHARS, sentences } from '../content/sentences';

/**
 * Version of the cut `itemPassages` makes: part of every `textHash`, so vectors made from an
 * older cut are seen as stale. Bump it whenever the passages of some item change.
 */
export const PASSAGES_VERSION = 1;

/** What is embedded of one item at one content version. */
export interface ItemPassages {
  /** The item's id. */
  readonly id: string;
  /** The item's content-version stamp (`itemFingerprint`), as the search segment keeps it. */
  readonly version: number;
  /**
   * SHA-256 (hex) of the passages' texts and `PASSAGES_VERSION`: equal exactly when the texts
   * to embed are, so a write that changes no embedded text (tags, a date) needs no provider call.
   */
  readonly textHash: string;
  /** The texts to embed, in the item's order, never empty: `title\n` + a run of sentences. */
  readonly passages: readonly string[];
}

/**
 * The passages of an item: the sentences of its summary then of its body's plain text, packed in
 * order into runs of at most `PASSAGE_CHARS` characters (the size of the chat's passages, so a
 * passage found by meaning is one the chat can quote), each led by the title so that it carries
 * its context; at most `maxPassages` (`EMBEDDINGS_MAX_PASSAGES`), the text past them is found by
 * keyword search only. An item with no text but its title has one passage, the title. The same
 * item at the same content always gives the same passages.
 */
export function itemPassages(item: Item, maxPassages: number): ItemPassages {
  const sents = [...sentences(item.summary ?? ''), ...sentences(plainTextOf(item))];
  const runs = packSentences(sents, PASSAGE_CHARS, maxPassages);
  const passages = runs.length ? runs.map((run) => `${item.title}\n${run}`) : [item.title];
  const hash = createHash('sha256').update(`passages v${PASSAGES_VERSION}`);
  for (const p of passages) hash.update('\u0000').update(p);
  return { id: item.id, version: itemFingerprint(item), textHash: hash.digest('hex'), passages };
}
