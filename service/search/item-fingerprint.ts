// The fingerprint is the content's version stamp of an item (content/item-fingerprint.ts): the
// file store keeps it in its catalogue, so an index starting from a persisted segment compares it
// without reading the item.
export { itemFingerprint } from '../content/item-fingerprint';
