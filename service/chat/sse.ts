/**
 * Server-sent events, both ways: a parser for an upstream `text/event-stream` body (OpenAI's
 * `data: {...}` chunks) and the writer of our own stream to clients.
 */

/** One parsed event. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** Options of `parseSse`. */
export interface ParseSseOptions {
  /**
   * Most bytes one event may hold while it is being read: its `data` lines so far and the line
   * being read (a comment or field line counts while it is read, and is then dropped). Past it
   * the parser throws `SseEventTooLarge` instead of buffering on. @default unbounded
   */
  readonly maxEventBytes?: number;
}

/** An event, or a line of one, longer than `ParseSseOptions.maxEventBytes`. */
export class SseEventTooLarge extends Error {
  constructor(readonly maxEventBytes: number) {
    super(`an event is larger than ${maxEventBytes} bytes`);
    this.name = 'SseEventTooLarge';
  }
}

const LF = 0x0a;
const CR = 0x0d;
const BOM = '\ufeff';

/**
 * Parses an event stream (WHATWG rules: `\n`, `\r\n` or `\r` line ends, `data:` lines joined with
 * `\n`, `:` comments ignored, a blank line dispatches, a leading BOM dropped). Yields events as
 * they complete.
 *
 * Works on the bytes: each chunk is scanned once for line ends (a UTF-8 sequence never holds
 * 0x0A or 0x0D), the pieces of an unfinished line are kept as they came and decoded once the line
 * ends, so a long line costs linear time, and what one event holds is counted in bytes against
 * `maxEventBytes` before it is kept.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array>, opts: ParseSseOptions = {}): AsyncGenerator<SseEvent> {
  const max = opts.maxEventBytes ?? Infinity;
  // ignoreBOM: lines are decoded one by one; only the stream's first may start with a BOM.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let eventBytes = 0;
  let event = '';
  let data: string[] = [];
  let firstLine = true;
  // The previous chunk ended with \r: a \n at the start of this one belongs to that line end.
  let afterCr = false;
  const lineOf = (): string => {
    const bytes = pending.length === 1 ? pending[0] : concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    let line = decoder.decode(bytes);
    if (firstLine) {
      firstLine = false;
      if (line.startsWith(BOM)) line = line.slice(1);
    }
    return line;
  };
  const handle = function* (line: string, bytes: number): Generator<SseEvent> {
    if (line === '') {
      if (data.length) yield { event: event || 'message', data: data.join('\n') };
      event = '';
      data = [];
      eventBytes = 0;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      data.push(value);
      eventBytes += bytes + 1;
    } else if (field === 'event') event = value;
  };
  const keep = (piece: Uint8Array) => {
    if (!piece.length) return;
    if (eventBytes + pendingBytes + piece.length > max) throw new SseEventTooLarge(max);
    pending.push(piece);
    pendingBytes += piece.length;
  };
  for await (const chunk of body) {
    let start = 0;
    if (afterCr && chunk.length && chunk[0] === LF) start = 1;
    afterCr = false;
    // The next \n and \r, found by the engine's indexOf rather than a loop over every byte.
    let lf = chunk.indexOf(LF, start);
    let cr = chunk.indexOf(CR, start);
    while (lf >= 0 || cr >= 0) {
      let i = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      keep(chunk.subarray(start, i));
      const bytes = pendingBytes;
      yield* handle(lineOf(), bytes);
      if (i === cr) {
        if (i + 1 < chunk.length) {
          if (chunk[i + 1] === LF) i++;
        } else afterCr = true;
      }
      start = i + 1;
      if (lf >= 0 && lf < start) lf = chunk.indexOf(LF, start);
      if (cr >= 0 && cr < start) cr = chunk.indexOf(CR, start);
    }
    // Copied: the stream may reuse its chunk's memory once it is handed back.
    keep(chunk.slice(start));
  }
  if (pendingBytes) {
    const bytes = pendingBytes;
    yield* handle(lineOf(), bytes);
  }
  yield* handle('', 0);
}

function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** One event in the wire format: `event: <name>\ndata: <json>\n\n`. */
export function formatSse(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}
