/**
 * Text passes side by side (issue 29): the Markdown clean-up, the upload heading match and the
 * search snippet before (tools/oracles/text-before.ts, verbatim) and after, in one process on the same
 * inputs. Reported as ratios: before against after, and the growth from 1 KB (and 100 KB) to
 * 1 MB for each. The old
 * passes are quadratic or worse on hostile text, so they are timed there at sizes they finish.
 * `run()` returns the Markdown report and writes bench/results/text.md;
 * `npx ts-node -T bench/text/run.ts` runs it standalone.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { leadingHeading } from '../../service/content/parse/parse-files';
import { plainText } from '../../service/content/plain-text';
import { Analyzer } from '../../service/search/analysis/analyzer';
import { buildSnippet } from '../../service/search/analysis/snippet';
import { HEADING_BEFORE, buildSnippetBefore, plainTextBefore } from '../../tools/oracles/regex-text-passes';

const ROOT = join(__dirname, '..', '..');

/** Sizes and repetitions; the defaults are the report's, tests pass small ones. */
export interface TextBenchOptions {
  /** Small, medium and large item sizes, characters. @default [1_000, 100_000, 1_000_000] */
  readonly sizes?: readonly [number, number, number];
  /** Sizes the old passes are timed at on hostile text (they are quadratic there). @default [5_000, 10_000, 20_000] */
  readonly hostileSizes?: readonly number[];
  /** Repetitions per measurement (the median is reported). @default 15 */
  readonly reps?: number;
}

/**
 * Median time of one call of `fn`, milliseconds: warmed up for about 50 ms (so that the JIT has
 * compiled the scanners as it has in a running service), then `reps` samples, each a batch of
 * calls lasting about a millisecond (one call when a call is slower).
 */
export function medianMs(fn: () => unknown, reps: number): number {
  const now = () => Number(process.hrtime.bigint()) / 1e6;
  const warmStart = now();
  let calls = 0;
  do {
    fn();
    calls++;
  } while (now() - warmStart < 50 && calls < 10_000);
  const batch = Math.max(1, Math.floor(calls / (now() - warmStart)));
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = now();
    for (let k = 0; k < batch; k++) fn();
    times.push((now() - t) / batch);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

/** `text` repeated (whole) and cut to `chars` characters. */
function sized(text: string, chars: number): string {
  return text.repeat(Math.ceil(chars / text.length)).slice(0, chars);
}

const fmt = (ms: number): string =>
  ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 1 ? `${ms.toFixed(1)} ms` : `${(ms * 1000).toFixed(0)} µs`;
const ratio = (a: number, b: number): string => `${(a / b).toFixed(a / b >= 10 ? 0 : 1)}×`;

/** One row of a side-by-side table. */
export interface Row {
  readonly what: string;
  readonly beforeMs: number;
  readonly afterMs: number;
}

/** The measurements; `report` turns them into Markdown. */
export interface TextBench {
  readonly sizes: readonly [number, number, number];
  /** Realistic Markdown (the README, repeated) at each size, before and after. */
  readonly plainText: readonly Row[];
  /** A common-word snippet of a plain-text item at each size. */
  readonly snippet: readonly Row[];
  /** Hostile shapes at growing sizes: before and after. */
  readonly hostile: readonly Row[];
}

/** Runs every measurement. */
export function measure(opts: TextBenchOptions = {}): TextBench {
  const sizes = opts.sizes ?? [1_000, 100_000, 1_000_000];
  const hostileSizes = opts.hostileSizes ?? [5_000, 10_000, 20_000];
  const reps = opts.reps ?? 15;
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const markdown = sizes.map((n) => sized(readme, n));
  const plainRows = markdown.map((md, i) => ({
    what: `README Markdown, ${sizes[i].toLocaleString('en')} chars`,
    beforeMs: medianMs(() => plainTextBefore(md), reps),
    afterMs: medianMs(() => plainText(md), reps),
  }));
  const analyzer = new Analyzer();
  const plain = plainText(readme);
  const items = sizes.map((n) => sized(plain, n));
  const isMatch = (t: string) => t === 'search' || t === 'limit';
  const snippetRows = items.map((text, i) => ({
    what: `snippet for "search limit", item of ${sizes[i].toLocaleString('en')} chars`,
    beforeMs: medianMs(() => buildSnippetBefore(text, analyzer, isMatch), reps),
    afterMs: medianMs(() => buildSnippet(text, analyzer, isMatch), reps),
  }));
  const hostile: Row[] = [];
  const shapes: Array<[string, (n: number) => string, (s: string) => unknown, (s: string) => unknown]> = [
    ['plainText, `x` + newlines + `x`', (n) => `x${'\n'.repeat(n)}x`, plainTextBefore, plainText],
    ['plainText, `[` repeated', (n) => '['.repeat(n), plainTextBefore, plainText],
    ['plainText, `<!--` repeated', (n) => sized('<!--', n), plainTextBefore, plainText],
    [
      'upload heading, `# a` + spaces + `#a`',
      (n) => `# a${' '.repeat(n / 20)}#a`,
      (s) => HEADING_BEFORE.exec(s),
      leadingHeading,
    ],
  ];
  for (const [what, make, before, after] of shapes) {
    for (const n of hostileSizes) {
      const text = make(n);
      hostile.push({
        what: `${what}, ${text.length.toLocaleString('en')} chars`,
        beforeMs: medianMs(() => before(text), Math.min(reps, 3)),
        afterMs: medianMs(() => after(text), reps),
      });
    }
  }
  return { sizes, plainText: plainRows, snippet: snippetRows, hostile };
}

/** The Markdown report of a run. */
export function report(b: TextBench): string {
  const [small, medium, large] = b.sizes.map((n) => n.toLocaleString('en'));
  const growth = (rows: readonly Row[], key: 'beforeMs' | 'afterMs', from: number, to: number) =>
    ratio(rows[to][key], rows[from][key]);
  const lines = [
    '## Text passes before and after issue 29',
    '',
    'Median of repeated calls in one process (`bench/text/run.ts`); before = the code as it was (`tools/oracles/text-before.ts`).',
    '',
    '| Pass | before | after | before / after |',
    '|---|---|---|---|',
    ...[...b.plainText, ...b.snippet].map(
      (r) => `| ${r.what} | ${fmt(r.beforeMs)} | ${fmt(r.afterMs)} | ${ratio(r.beforeMs, r.afterMs)} |`,
    ),
    '',
    `| Growth of the time with the size | before, ${small} → ${large} | after, ${small} → ${large} | before, ${medium} → ${large} | after, ${medium} → ${large} |`,
    '|---|---|---|---|---|',
    `| plainText (README Markdown) | ${growth(b.plainText, 'beforeMs', 0, 2)} | ${growth(b.plainText, 'afterMs', 0, 2)} | ${growth(b.plainText, 'beforeMs', 1, 2)} | ${growth(b.plainText, 'afterMs', 1, 2)} |`,
    `| snippet (common words) | ${growth(b.snippet, 'beforeMs', 0, 2)} | ${growth(b.snippet, 'afterMs', 0, 2)} | ${growth(b.snippet, 'beforeMs', 1, 2)} | ${growth(b.snippet, 'afterMs', 1, 2)} |`,
    '',
    'Hostile shapes (the old passes are superlinear here: doubling the size multiplies their time by 4 or 8):',
    '',
    '| Input | before | after | before / after |',
    '|---|---|---|---|',
    ...b.hostile.map((r) => `| ${r.what} | ${fmt(r.beforeMs)} | ${fmt(r.afterMs)} | ${ratio(r.beforeMs, r.afterMs)} |`),
  ];
  return lines.join('\n');
}

/** Runs the benchmark, writes bench/results/text.md, returns the report. */
export async function run(opts: TextBenchOptions = {}): Promise<string> {
  const md = report(measure(opts));
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'text.md'), `${md}\n`);
  return md;
}

if (require.main === module) {
  run().then(
    (md) => process.stdout.write(`${md}\n`),
    (err: unknown) => {
      process.stderr.write(`text bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
