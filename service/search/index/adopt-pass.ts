import { mapped } from '../../lib/untracked-arrays';
import { ChunkedList, arrayChunks } from '../../lib/chunked-list';
import { MERGE_STEP_DOCS, roomAfter, type MergeSource, type Taken } from './merge-pass';
import { LONG_LENGTH } from './term-values';

/**
 * The pass of a merge that renumbers nothing: every document below `end` stays where it is, in
 * the index's own forward arrays (their first part becomes the sealed index's, appends go on past
 * it), so nothing is copied and no array of the old forward index dies. A bulk load's doubled
 * arrays, replaced by copies at `seal`, were ~550 MiB of garbage at 1M documents whose sweep was
 * a 127 ms pause on the event loop's thread (issue 40). Counts each term's postings into `starts`.
 */
export function* adoptPass(src: MergeSource, end: number, starts: Int32Array[]): Generator<void, Taken> {
  const { nf, lengths, fwdStart, fwdTerm } = src;
  const ids = new ChunkedList(arrayChunks<string>());
  const short: Uint16Array[] = [];
  for (let f = 0; f < nf; f++) {
    short.push(mapped.u16(end + roomAfter(src, end)));
    yield;
  }
  const lengthSum = new Float64Array(nf);
  for (let d = 0; d < end; d++) {
    ids.push(src.idOf(d));
    for (let f = 0; f < nf; f++) {
      const length = lengths[d * nf + f];
      short[f][d] = Math.min(length, LONG_LENGTH);
      lengthSum[f] += length;
      const count = starts[f];
      for (let i = fwdStart[d * nf + f]; i < fwdStart[d * nf + f + 1]; i++) count[fwdTerm[i] + 1] += 1;
    }
    if (d % MERGE_STEP_DOCS === MERGE_STEP_DOCS - 1) yield;
  }
  return { n: end, ids, lengthSum, forward: src, short };
}
