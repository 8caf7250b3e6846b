import { mapped } from '../../lib/untracked-arrays';
import { ChunkedList, arrayChunks } from '../../lib/chunked-list';
import { growable } from './growable';
import { MERGE_STEP_DOCS, roomAfter, touch, type Forward, type MergeSource, type Taken } from './merge-pass';
import { LONG_LENGTH } from './term-values';

/** Documents per step of the pass that only sizes the new arrays. */
const SCAN_STEP_DOCS = 32_768;

/**
 * The pass of a merge that drops deleted documents: a pass that sizes the new arrays, then one
 * that copies the documents live when it reaches them, renumbered in order, and counts each
 * term's postings into `starts`.
 */
export function* copyPass(src: MergeSource, end: number, starts: Int32Array[]): Generator<void, Taken> {
  const { nf } = src;
  const {
    fwdStart: oldStart,
    fwdTerm: oldTerm,
    fwdTf: oldTf,
    lengths: oldLengths,
    fps: oldFps,
    posStart: oldPosStart,
    posBytes: oldPos,
  } = src;
  // Sizes of the documents live now: bounds, as documents below `end` can only be deleted.
  let most = 0;
  let entries = 0;
  let posLength = 0;
  for (let d = 0; d < end; d++) {
    if (src.live(d)) {
      most += 1;
      entries += oldStart[(d + 1) * nf] - oldStart[d * nf];
      posLength += oldPosStart[d + 1] - oldPosStart[d];
    }
    if (d % SCAN_STEP_DOCS === SCAN_STEP_DOCS - 1) yield;
  }
  yield;
  // Room for a quarter more documents, with their entries at a quarter above the average:
  // appends until the next merge, and those made while this one runs, need no copy of these
  // arrays (and past it, the large ones grow in place: `growable`). Typed arrays are allocated
  // untouched (`mapped`, `growable`: fresh mappings, not blocks malloc zeroes whole, 59–152 ms a
  // step at 1M documents); their pages are faulted in as the passes write them, in order. Each is
  // allocated in a step of its own (shared buffers start no collection, but ordinary ones did:
  // issue 39).
  const room = roomAfter(src, most);
  const roomEntries = Math.ceil((room * 1.25 * entries) / Math.max(1, most)) + 1024;
  // The ids go into chunks as the copy pass reaches them: an array of every id is filled (and so
  // faulted in) whole when made, at 1M documents ~7–9 MB, 37–85 ms of page faults in one step at a
  // load of 3–17 (issue 39). The vocabulary is not copied: the sealed index reads the index's own
  // array up to `nt` (`SealedIndex.termCount`).
  const ids = new ChunkedList(arrayChunks<string>());
  const gone = mapped.u8(most + room);
  yield;
  const fingerprints = growable(Uint32Array, most + room);
  yield;
  const lengths = growable(Int32Array, (most + room) * nf);
  yield;
  const fwdStart = growable(Int32Array, (most + room) * nf + 1);
  yield;
  const fwdTerm = growable(Int32Array, entries + roomEntries);
  yield;
  const fwdTf = growable(Uint16Array, entries + roomEntries);
  yield;
  const posStart = growable(Int32Array, most + room + 1);
  yield;
  const posBytes = growable(
    Uint8Array,
    posLength + (posLength ? Math.ceil((room * 1.25 * posLength) / Math.max(1, most)) + 1024 : 0),
  );
  yield;
  const short: Uint16Array[] = [];
  for (let f = 0; f < nf; f++) {
    short.push(mapped.u16(most + room));
    yield;
  }
  const newOf = mapped.i32(end);
  yield;
  // Slots are scattered over the documents: the new short id of each written once in order first.
  const slotOfShort = mapped.i32(most + room);
  yield;
  const shortOfSlot = mapped.i32(src.slotLimit + room);
  yield* touch(shortOfSlot);
  const lengthSum = new Float64Array(nf);
  let n = 0;
  let at = 0;
  let posAt = 0;
  for (let d = 0; d < end; d++) {
    if (!src.live(d)) {
      newOf[d] = -1;
      continue;
    }
    const id = src.idOf(d);
    const nd = n++;
    newOf[d] = nd;
    ids.push(id);
    const slot = src.slotOf(d);
    slotOfShort[nd] = slot;
    shortOfSlot[slot] = nd;
    fingerprints[nd] = oldFps[d];
    for (let f = 0; f < nf; f++) {
      const length = oldLengths[d * nf + f];
      lengths[nd * nf + f] = length;
      short[f][nd] = Math.min(length, LONG_LENGTH);
      lengthSum[f] += length;
      const from = oldStart[d * nf + f];
      const to = oldStart[d * nf + f + 1];
      fwdTerm.set(oldTerm.subarray(from, to), at);
      fwdTf.set(oldTf.subarray(from, to), at);
      const count = starts[f];
      for (let i = from; i < to; i++) count[oldTerm[i] + 1] += 1;
      at += to - from;
      fwdStart[nd * nf + f + 1] = at;
    }
    const from = oldPosStart[d];
    const to = oldPosStart[d + 1];
    if (to > from) posBytes.set(oldPos.subarray(from, to), posAt);
    posAt += to - from;
    posStart[nd + 1] = posAt;
    if (nd % MERGE_STEP_DOCS === MERGE_STEP_DOCS - 1) yield;
  }
  // Documents deleted between the first pass and the copy: fewer than sized (the arrays keep the room).
  const forward: Forward = { fps: fingerprints, lengths, fwdStart, fwdTerm, fwdTf, posStart, posBytes };
  return { n, ids, lengthSum, forward, short, renumbered: { newOf, slotOfShort, shortOfSlot, gone, forward } };
}
