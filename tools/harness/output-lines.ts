import { StringDecoder } from 'node:string_decoder';

/** A test of one line: a substring, a pattern or a predicate. */
export type LineMatch = string | RegExp | ((line: string) => boolean);

/** One stream's end of `OutputLines`: its chunks as they are read, then its end. */
export interface OutputStreamReader {
  /** A chunk as read from the pipe: it may end mid-line, or mid-character. */
  write(chunk: Buffer): void;
  /** The stream ended: a last line without a newline counts as a line. Once per stream; more calls do nothing. */
  end(): void;
}

/** Options of `OutputLines`. */
export interface OutputLinesOptions {
  /**
   * How many characters of complete lines are kept: a test's process prints kilobytes, but
   * `make up` (tools/harness/local-stack.ts) keeps its processes for hours. Past it the oldest
   * lines go; a line awaited before it was printed is matched as it arrives, so it is never missed.
   * @default 64 Mi characters
   */
  readonly keptChars?: number;
}

/**
 * True when `line` passes `match`. A predicate that throws (JSON.parse of a line that is not
 * JSON) counts as not passing, as a throwing check counts as "not yet" in `waitFor`.
 */
export function lineMatches(match: LineMatch, line: string): boolean {
  if (typeof match === 'string') return line.includes(match);
  if (match instanceof RegExp) {
    match.lastIndex = 0; // a /g or /y pattern keeps where it stopped; every line is tested whole
    return match.test(line);
  }
  try {
    return match(line);
  } catch {
    return false;
  }
}

/** `match` as a failure message names it. */
export function describeMatch(match: LineMatch): string {
  if (typeof match === 'string') return `a line containing ${JSON.stringify(match)}`;
  if (match instanceof RegExp) return `a line matching ${String(match)}`;
  return `a line passing ${match.name || 'the given test'}`;
}

/**
 * A child process's output as lines, in the order they were completed: each stream (stdout,
 * stderr) is split on its own, so a line that arrives in several chunks is one line and a line
 * of one stream is never cut by the other's. Listeners see each complete line as it is read.
 */
export class OutputLines {
  private readonly lines: string[] = [];
  /** Index in `lines` of the oldest line kept (older ones were dropped to stay under `keptChars`). */
  private first = 0;
  /** How many lines came before `lines[0]` (removed by compaction): line numbers stay fixed. */
  private base = 0;
  private keptChars = 0;
  private dropped = 0;
  private readonly partials = new Set<{ text: string }>();
  private readonly listeners = new Set<(line: string) => void>();
  private readonly keptCharsMax: number;

  constructor(opts: OutputLinesOptions = {}) {
    this.keptCharsMax = opts.keptChars ?? 64 * 1024 * 1024;
  }

  /** A reader for one stream of one process run. */
  reader(): OutputStreamReader {
    const decoder = new StringDecoder('utf8');
    const partial = { text: '' };
    this.partials.add(partial);
    let ended = false;
    const take = (text: string) => {
      const parts = (partial.text + text).split('\n');
      partial.text = parts.pop() ?? '';
      for (const line of parts) this.add(line);
    };
    return {
      write: (chunk) => take(decoder.write(chunk)),
      end: () => {
        if (ended) return;
        ended = true;
        take(decoder.end());
        this.partials.delete(partial);
        if (partial.text) this.add(partial.text);
      },
    };
  }

  /** Calls `listener` with each line completed from now on; returns the call that stops it. */
  onLine(listener: (line: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The first kept complete line that passes `match`, if any, among the lines numbered `from` on
   * (a `count` read earlier: the lines completed since then).
   */
  find(match: LineMatch, from = 0): string | undefined {
    for (let i = Math.max(this.first, from - this.base); i < this.lines.length; i++)
      if (lineMatches(match, this.lines[i])) return this.lines[i];
    return undefined;
  }

  /** How many lines have been completed so far, dropped ones included: the number the next one gets. */
  get count(): number {
    return this.base + this.lines.length;
  }

  /** How many of the oldest lines were dropped to stay under the kept size (0 in any test). */
  get droppedLines(): number {
    return this.dropped;
  }

  /** Everything kept: the complete lines, then any line still unfinished. */
  text(): string {
    const done = this.lines.slice(this.first);
    const open = [...this.partials].map((p) => p.text).filter((t) => t !== '');
    return [...done.map((l) => `${l}\n`), ...open].join('');
  }

  private add(line: string): void {
    this.lines.push(line);
    this.keptChars += line.length + 1;
    while (this.keptChars > this.keptCharsMax && this.first < this.lines.length - 1) {
      this.keptChars -= this.lines[this.first].length + 1;
      this.first++;
      this.dropped++;
    }
    // Compact now and then, not at every drop.
    if (this.first > 100_000 && this.first * 2 > this.lines.length) {
      this.lines.splice(0, this.first);
      this.base += this.first;
      this.first = 0;
    }
    for (const listener of [...this.listeners]) listener(line);
  }
}
