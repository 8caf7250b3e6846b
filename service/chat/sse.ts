/**
 * Server-sent events, both ways: a parser for an upstream `text/event-stream` body (OpenAI's
 * `data: {...}` chunks) and the writer of our own stream to clients.
 */

/** One parsed event. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/**
 * Parses an event stream (WHATWG rules: `\n`, `\r\n` or `\r` line ends, `data:` lines joined with
 * `\n`, `:` comments ignored, a blank line dispatches). Yields events as they complete.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  const dispatch = function* (): Generator<SseEvent> {
    if (data.length) yield { event: event || 'message', data: data.join('\n') };
    event = '';
    data = [];
  };
  const lines = function* (final: boolean): Generator<string> {
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buffer);
      // A lone \r at the end may be the first half of \r\n: wait for more unless the stream ended.
      if (!m || (!final && m[0] === '\r' && m.index === buffer.length - 1)) break;
      yield buffer.slice(0, m.index);
      buffer = buffer.slice(m.index + m[0].length);
    }
  };
  const handle = function* (line: string): Generator<SseEvent> {
    if (line === '') {
      yield* dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (const line of lines(false)) yield* handle(line);
  }
  buffer += decoder.decode();
  for (const line of lines(true)) yield* handle(line);
  if (buffer) yield* handle(buffer);
  yield* dispatch();
}

/** One event in the wire format: `event: <name>\ndata: <json>\n\n`. */
export function formatSse(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}
