/**
 * The reference of the proximity stage's counting (service/search/scoring/proximity.ts): window counts
 * by the sweep's own plain rule (bench/search/sweep-collection.ts `windows`: for each a in order,
 * the first unused b of the document within the span) over positions read one term at a time,
 * and a pair's window document frequency by visiting every live posting of its first term (no
 * cache, no galloping intersection, no appended/base split). Read through `PostingsView` only.
 * Never used by the service.
 */
import type { ProximitySource, WindowCounts } from '../../service/search/index/cursor';
import type { PostingsView } from '../../service/search/index/postings-view';

/** Window counts as the sweep counts them. */
export function naiveWindows(pa: readonly number[], pb: readonly number[], window: number): WindowCounts {
  const after = new Set(pb);
  const used = new Set<number>();
  let o = 0;
  let u = 0;
  for (const p of pa) {
    if (after.has(p + 1)) o++;
    const q = pb.find((x) => Math.abs(x - p) < window && !used.has(x));
    if (q !== undefined) {
      used.add(q);
      u++;
    }
  }
  return { o, u };
}

/** The proximity stage's source over a `PostingsView`, every value found the plainest way. */
export function exhaustiveProximitySource(view: PostingsView): ProximitySource | undefined {
  const f = view.positionsField;
  if (f < 0) return undefined;
  const windows = (doc: number, a: number, b: number, window: number, out: WindowCounts): WindowCounts => {
    const w = naiveWindows(view.positions(doc, a), view.positions(doc, b), window);
    out.o = w.o;
    out.u = w.u;
    return out;
  };
  return {
    termId: (term) => view.termId(term),
    documents: () => view.documents(),
    averageLength: () => view.averageLength(f),
    length: (doc) => view.fieldLength(doc, f),
    windows,
    *windowDf(a, b, window) {
      const df: WindowCounts = { o: 0, u: 0 };
      const w: WindowCounts = { o: 0, u: 0 };
      view.eachPosting(f, a, (doc) => {
        windows(doc, a, b, window, w);
        if (w.o) df.o++;
        if (w.u || w.o) df.u++;
      });
      return df;
    },
  };
}
