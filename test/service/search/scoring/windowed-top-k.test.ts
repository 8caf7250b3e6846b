import fc from 'fast-check';
import { CompactIndex } from '../../../../service/search/index/compact-index';
import { traceWindows, windowsTraced } from '../../../../service/search/scoring/window-trace';
import { accumulatedTopK } from '../../../../service/search/scoring/accumulated-top-k';
import { boundedTopK } from '../../../../service/search/scoring/bounded-top-k';
import { maxScoreTopK } from '../../../../service/search/scoring/max-score';
import type { TopKOptions } from '../../../../service/search/scoring/top-k';
import { WINDOW_POSTINGS, WindowPace, windowedTopK } from '../../../../service/search/scoring/windowed-top-k';
import { PROPERTY_HANG_GUARD_MS } from '../../../helpers/property';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'theta', 'kappa'];
const BM25 = { k: 1.2, b: 0.7, d: 0 };

/** 70,000 documents of four words and the cursors of a seven-term query over them: 280,000 postings. */
function sevenTermsOver70k() {
  const index = new CompactIndex(['text'], { minMergeDocs: 1 << 20, background: false });
  for (let i = 0; i < 70_000; i++) index.add(`d${i}`, [[WORDS[i % 2], WORDS[2 + (i % 3)], 'kappa', 'theta']]);
  const { cursors } = index.cursors(
    [
      ['alpha', 1],
      ['beta', 1.5],
      ['gamma', 1],
      ['delta', 2],
      ['epsilon', 0.7],
      ['kappa', 0.5],
      ['theta', 0.25],
    ],
    { text: 1 },
    BM25,
    false,
  );
  return { index, cursors };
}

/**
 * `sevenTermsOver70k`'s query for top 10, its hits in one pass, and `boundedTopK` wrapped to note
 * the postings of each window it is given (`held`), with a pace of its own.
 */
function windowsCounted() {
  const { index, cursors } = sevenTermsOver70k();
  const opts: TopKOptions = { k: 10, idOf: (d) => index.externalId(d) };
  const held: number[] = [];
  const counting: typeof boundedTopK = (cs, o) => {
    held.push(cs.reduce((n, c) => n + c.docs.length, 0));
    return boundedTopK(cs, o);
  };
  return { cursors, opts, whole: boundedTopK(cursors, opts), held, counting, pace: new WindowPace() };
}

describe('windowedTopK', () => {
  it('writes each window to the window log while it is on, and nothing once it is off', async () => {
    const { cursors, opts, whole, pace } = windowsCounted();
    const lines: string[] = [];
    const before = windowsTraced.n;
    traceWindows({ ms: -1, log: (line) => lines.push(line) });
    try {
      const hits = await windowedTopK(boundedTopK, cursors, opts, async () => {}, { ms: 0, pace });
      expect(hits).toEqual(whole);
    } finally {
      traceWindows(undefined);
    }
    expect(lines.length).toBeGreaterThan(1);
    expect(windowsTraced.n - before).toBe(lines.length);
    for (const line of lines)
      expect(line).toMatch(
        /^\[window\] boundedTopK \d+\.\d ms cpu \(\d+\.\d wall\) at=\d+\.\d postings=\d+ ns\/posting=\d+ cursors=\d+ span=\d+ faults=\d+ .*rerun=\d+\.\d ms cpu/,
      );
    const logged = lines.reduce((n, l) => n + Number(/postings=(\d+)/.exec(l)![1]), 0);
    expect(logged).toBe(cursors.reduce((n, c) => n + c.docs.length, 0));
    lines.length = 0;
    await windowedTopK(boundedTopK, cursors, opts, async () => {}, { ms: 0, pace });
    expect(lines).toEqual([]);
  });

  it("gives the scorer options and cursors of one shape, the index's cursors' (one hidden class each), in one window or many, with or without known documents or a floor", async () => {
    const { cursors, opts, whole } = windowsCounted();
    const optionKeys: string[] = [];
    const cursorKeys: string[] = [];
    const noting: typeof boundedTopK = (cs, o) => {
      optionKeys.push(Object.keys(o).join());
      for (const c of cs) cursorKeys.push(Object.keys(c).join());
      return boundedTopK(cs, o);
    };
    const known = Array.from(cursors[0].docs.subarray(0, 20));
    for (const o of [opts, { ...opts, known }, { ...opts, floor: 0 }, { floor: 0, known, ...opts }])
      for (const postings of [1 << 12, 1 << 20])
        expect(await windowedTopK(noting, cursors, o, async () => {}, { postings, ms: 0 })).toEqual(whole);
    expect(new Set(optionKeys)).toEqual(
      new Set(['k,idOf,keep,coordination,maxCoordination,floor,known,counted,whole,scratch,sample']),
    );
    expect(new Set(cursorKeys)).toEqual(new Set(cursors.map((c) => Object.keys(c).join())));
    expect(new Set(cursorKeys).size).toBe(1);
  });

  it(
    'gives the same hits, to the bit, as one pass of the scorer it wraps, window after window',
    async () => {
      let pauses = 0;
      await fc.assert(
        fc.asyncProperty(
          // Short documents of few words: many tie, across windows too.
          fc.array(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }), {
            minLength: 1,
            maxLength: 120,
          }),
          fc.array(
            fc.tuple(
              fc.constantFrom(...WORDS),
              fc.oneof(fc.constantFrom(1, 2), fc.double({ min: 0.05, max: 3, noNaN: true })),
            ),
            { minLength: 1, maxLength: 6 },
          ),
          fc.integer({ min: 1, max: 15 }),
          fc.integer({ min: 1, max: 40 }),
          // The time each window "takes" (a fake clock): later windows are sized from it, so they vary.
          fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { minLength: 1, maxLength: 8 }),
          async (docs, terms, k, windowPostings, paces) => {
            // Background merges off: some documents sit in the base, the latest in the appended segment.
            const index = new CompactIndex(['title', 'text'], { minMergeDocs: 16, background: false });
            // Ids in the reverse of document order: a tie in a later window wins on its id.
            docs.forEach((words, i) => index.add(`d${String(999 - i).padStart(3, '0')}`, [words.slice(0, 2), words]));
            const { cursors, whole: wholeScore } = index.cursors(terms, { title: 0.5, text: 1 }, BM25, false);
            const opts: TopKOptions = { k, idOf: (d) => index.externalId(d) };
            const pause = async () => {
              pauses += 1;
            };
            // Documents known to match (as RM3's feedback documents are): their floor, taken over the
            // whole cursors, prunes every window and changes no hit.
            const known = [...new Set(cursors.flatMap((c) => Array.from(c.docs.subarray(0, 3))))];
            let clock = 0;
            let tick = 0;
            const now = () => (clock += paces[tick++ % paces.length]);
            for (const topK of [maxScoreTopK, boundedTopK, accumulatedTopK]) {
              const whole = topK(cursors, opts);
              // Windows of `windowPostings` each (no time to size them for), then windows sized by the fake clock.
              expect(await windowedTopK(topK, cursors, opts, pause, { postings: windowPostings, ms: 0 })).toEqual(
                whole,
              );
              expect(
                await windowedTopK(topK, cursors, { ...opts, known }, pause, { postings: windowPostings, ms: 0 }),
              ).toEqual(whole);
              const pace = new WindowPace();
              expect(
                await windowedTopK(topK, cursors, opts, pause, { postings: windowPostings, ms: 1, now, pace }),
              ).toEqual(whole);
              expect(
                await windowedTopK(topK, cursors, { ...opts, known }, pause, {
                  postings: windowPostings,
                  ms: 1,
                  now,
                  pace,
                }),
              ).toEqual(whole);
              // With the index's whole scorer (known documents' floor, leaders and survivors scored
              // from the forward entries), with a filter too: the same hits.
              expect(
                await windowedTopK(topK, cursors, { ...opts, known, whole: wholeScore }, pause, {
                  postings: windowPostings,
                  ms: 0,
                }),
              ).toEqual(whole);
              const keep = (d: number) => d % 3 !== 0;
              expect(
                await windowedTopK(topK, cursors, { ...opts, keep, whole: wholeScore }, pause, {
                  postings: windowPostings,
                  ms: 1,
                  now,
                  pace,
                }),
              ).toEqual(topK(cursors, { ...opts, keep }));
            }
            // accumulatedTopK counts the documents it meets, window after window: the query's total.
            const counted = { matched: 0 };
            await windowedTopK(accumulatedTopK, cursors, { ...opts, counted }, pause, {
              postings: windowPostings,
              ms: 1,
              now,
              pace: new WindowPace(),
            });
            expect(counted.matched).toBe(new Set(cursors.flatMap((c) => Array.from(c.docs))).size);
          },
        ),
        { numRuns: 150 },
      );
      // Runs were cut into several windows (how many depends on the draws: at least some).
      expect(pauses).toBeGreaterThan(30);
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('cuts a query over 280,000 postings into windows of 2^16 while they score slowly, into fewer once they score fast', async () => {
    // At 2^18 postings a window (before issue 28's seventh slice), one window's scoring during an
    // ingest at 200k documents held the event loop for up to 37 ms.
    expect(WINDOW_POSTINGS).toBe(1 << 16);
    const { index, cursors } = sevenTermsOver70k();
    expect(cursors.reduce((n, c) => n + c.docs.length, 0)).toBe(280_000);
    const opts: TopKOptions = { k: 10, idOf: (d) => index.externalId(d) };
    const whole = boundedTopK(cursors, opts);
    const pace = new WindowPace();
    // A fake clock: each window's scoring takes `ms`. Returns how many windows the query took.
    const windows = async (ms: number) => {
      let clock = 0;
      let calls = 0;
      let pauses = 0;
      const now = () => (clock += calls++ % 2 ? ms : 0);
      expect(
        await windowedTopK(boundedTopK, cursors, opts, async () => void (pauses += 1), { ms: 5, now, pace }),
      ).toEqual(whole);
      // A pause after every window, the last too, when there are several (none for one window).
      expect(pauses).toBe(calls / 2 > 1 ? calls / 2 : 0);
      return calls / 2;
    };
    // No pace known, 10 ms a window of 2^16 postings: every window stays at 2^16 (five windows).
    expect(await windows(10)).toBe(5);
    // 1 ms a window: the pace may double per window (2^16, 2^16, 2^17, the rest), then from query to query.
    expect(await windows(1)).toBe(4);
    expect(await windows(1)).toBe(2);
    // The pace is then known to be fast: one window, as without windows.
    expect(await windows(1)).toBe(1);
    // Slow again: that one window takes long, and the pace is slow from then on.
    expect(await windows(40)).toBe(1);
    expect(await windows(10)).toBe(5);
  });

  it('sizes windows down to `fewest` postings while they score slowly, and starts there while no pace is known', async () => {
    const { cursors, opts, whole, held, counting, pace } = windowsCounted();
    // Each window takes 10 ms (a scorer not optimised yet): windows of `fewest`, not of `postings`.
    let clock = 0;
    let calls = 0;
    const now = () => (clock += calls++ % 2 ? 10 : 0);
    const fewest = 1 << 12;
    expect(await windowedTopK(counting, cursors, opts, async () => {}, { ms: 5, now, pace, fewest })).toEqual(whole);
    expect(held.reduce((a, b) => a + b, 0)).toBe(280_000);
    expect(held.length).toBeGreaterThanOrEqual(60);
    // About `fewest` a window (a window ends at a document boundary: a few postings either way).
    expect(Math.max(...held.slice(0, -1))).toBeLessThanOrEqual(fewest + cursors.length);
    // Fast again (1 ms a window): the pace doubles per window, back past `postings` within the query.
    held.length = 0;
    clock = 0;
    calls = 0;
    const fast = () => (clock += calls++ % 2 ? 1 : 0);
    expect(await windowedTopK(counting, cursors, opts, async () => {}, { ms: 5, now: fast, pace, fewest })).toEqual(
      whole,
    );
    expect(Math.max(...held)).toBeGreaterThan(1 << 16);
  });

  it('never sizes a window past `most` postings, however fast the pace learned before', async () => {
    const { cursors, opts, whole, held, counting, pace } = windowsCounted();
    // A pace of a million postings a millisecond: windows of 5M without a bound, the whole 280,000 in one.
    pace.set(counting, 1e6);
    expect(await windowedTopK(counting, cursors, opts, async () => {}, { ms: 5, pace })).toEqual(whole);
    expect(held).toEqual([280_000]);
    held.length = 0;
    pace.set(counting, 1e6);
    const most = 1 << 16;
    expect(await windowedTopK(counting, cursors, opts, async () => {}, { ms: 5, pace, most })).toEqual(whole);
    // About `most` a window (a window ends at a document boundary: a few postings either way).
    expect(held.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...held)).toBeLessThanOrEqual(most + cursors.length);
    expect(held.reduce((a, b) => a + b, 0)).toBe(280_000);
  });

  it('bounds by `mostOpen` the windows without a floor to prune from, not the others', async () => {
    const { cursors, opts, whole, held, counting, pace } = windowsCounted();
    // A fast pace (a million postings a millisecond) and a clock that stands still (the pace stays):
    // without `mostOpen` every window would be `most`.
    const sizing = { ms: 5, pace, now: () => 0, fewest: 1 << 12, most: 1 << 17, mostOpen: 1 << 14 };
    pace.set(counting, 1e6);
    expect(await windowedTopK(counting, cursors, opts, async () => {}, sizing)).toEqual(whole);
    // The first window has no k-th score to start from: about `mostOpen` (a window ends at a
    // document boundary: a few postings either way); the next ones prune from it: up to `most`.
    expect(held[0]).toBeLessThanOrEqual((1 << 14) + cursors.length);
    expect(Math.max(...held.slice(1))).toBeGreaterThan(1 << 16);
    expect(held.reduce((a, b) => a + b, 0)).toBe(280_000);
    // A pass from k known documents has a floor from the start: no window is bounded by `mostOpen`.
    held.length = 0;
    pace.set(counting, 1e6, true);
    const known: TopKOptions = { ...opts, known: Array.from({ length: 10 }, (_, d) => d) };
    expect(await windowedTopK(counting, cursors, known, async () => {}, sizing)).toEqual(boundedTopK(cursors, known));
    expect(held[0]).toBeGreaterThan(1 << 16);
    // A cold pass (cursors without values) the same: its first window about `mostOpen`, the next ones up to `most`.
    held.length = 0;
    const cold = cursors.map((c) => ({ ...c, vals: undefined }));
    pace.set(counting, 1e6, false, true);
    expect(await windowedTopK(counting, cold, opts, async () => {}, sizing)).toEqual(whole);
    expect(held[0]).toBeLessThanOrEqual((1 << 14) + cursors.length);
    expect(Math.max(...held.slice(1))).toBeGreaterThan(1 << 16);
  });

  it('awaits a pause after the last of several windows, so that what follows starts a turn of its own', async () => {
    const { cursors, opts, whole, counting } = windowsCounted();
    const events: string[] = [];
    const noting: typeof counting = (cs, o) => {
      events.push('window');
      return counting(cs, o);
    };
    const pause = async () => void events.push('pause');
    // Windows of 2^16 (no time to size them for): five, each followed by a pause.
    expect(await windowedTopK(noting, cursors, opts, pause, { postings: 1 << 16, ms: 0 })).toEqual(whole);
    expect(events).toEqual(Array.from({ length: 5 }, () => ['window', 'pause']).flat());
    // One window: the scorer as is, no pause (as without windows).
    events.length = 0;
    expect(await windowedTopK(noting, cursors, opts, pause, { postings: 1 << 19, ms: 0 })).toEqual(whole);
    expect(events).toEqual(['window']);
  });

  it("keeps the pace of a pass from known documents (RM3's expanded pass) apart from the others'", async () => {
    const { index, cursors } = sevenTermsOver70k();
    const plain: TopKOptions = { k: 10, idOf: (d) => index.externalId(d) };
    const fromKnown: TopKOptions = { ...plain, known: [0, 1, 2] };
    const pace = new WindowPace();
    const windows = async (opts: TopKOptions, ms: number) => {
      let clock = 0;
      let calls = 0;
      let pauses = 0;
      const now = () => (clock += calls++ % 2 ? ms : 0);
      expect(
        await windowedTopK(boundedTopK, cursors, opts, async () => void (pauses += 1), { ms: 5, now, pace }),
      ).toEqual(boundedTopK(cursors, opts));
      expect(pauses).toBe(calls / 2 > 1 ? calls / 2 : 0);
      return calls / 2;
    };
    // The passes without known documents learn a fast pace: one window.
    for (let i = 0; i < 3; i++) await windows(plain, 1);
    expect(await windows(plain, 1)).toBe(1);
    // A pass from known documents has no pace of its own yet: windows of 2^16 (five), not one.
    expect(await windows(fromKnown, 10)).toBe(5);
    expect(pace.of(boundedTopK, true)).toBeDefined();
    // Its slow pace leaves the others' as it was.
    expect(await windows(plain, 1)).toBe(1);
  });

  it('keeps the pace of a pass with cursors scored without values (a first use) apart from warm passes', async () => {
    const { index, cursors } = sevenTermsOver70k();
    // The same postings, scored from their tfs and lengths (no values computed ahead): the same scores.
    const coldCursors = cursors.map((c) => ({ ...c, vals: undefined }));
    const opts: TopKOptions = { k: 10, idOf: (d) => index.externalId(d) };
    const pace = new WindowPace();
    const windows = async (cs: typeof cursors, ms: number) => {
      let clock = 0;
      let calls = 0;
      let pauses = 0;
      const now = () => (clock += calls++ % 2 ? ms : 0);
      expect(await windowedTopK(boundedTopK, cs, opts, async () => void (pauses += 1), { ms: 5, now, pace })).toEqual(
        boundedTopK(cursors, opts),
      );
      expect(pauses).toBe(calls / 2 > 1 ? calls / 2 : 0);
      return calls / 2;
    };
    // Warm passes learn a fast pace: one window.
    for (let i = 0; i < 3; i++) await windows(cursors, 1);
    expect(await windows(cursors, 1)).toBe(1);
    // A cold pass has no pace of its own yet: windows of 2^16 (five), not one.
    expect(await windows(coldCursors, 10)).toBe(5);
    expect(pace.of(boundedTopK, false, true)).toBeDefined();
    // Its slow pace leaves the warm passes' as it was.
    expect(await windows(cursors, 1)).toBe(1);
  });
});
