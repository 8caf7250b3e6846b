import { connect } from 'node:net';

/** An HTTP answer as a raw client read it. */
export interface RawAnswer {
  readonly status: number;
  /** Header names lower-cased. */
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Parses one HTTP/1.1 response (headers and whatever body followed). */
export function parseAnswer(text: string): RawAnswer | undefined {
  const m = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(text);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of m[2].split('\r\n')) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(m[1]), headers, body: m[3] };
}

/**
 * POSTs over a raw socket the way simple clients do (Python requests, a shell script): the whole
 * request first, in 16 KiB writes, and only then the answer. Reading is paused while sending,
 * so an answer is only seen if the connection survives the upload. Rejects with the socket
 * error (EPIPE, ECONNRESET) when it does not.
 */
export function sendThenRead(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  opts: { chunked: boolean },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.pause();
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const answer = parseAnswer(text);
      if (answer) resolve(answer);
      else reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
    });
    const head =
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      (opts.chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${body.length}\r\n`) +
      '\r\n';
    const frame = (c: Buffer) =>
      opts.chunked ? Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]) : c;
    const write = (b: Buffer | string) =>
      new Promise<void>((ok, fail) => socket.write(b, (err) => (err ? fail(err) : ok())));
    void (async () => {
      try {
        await write(head);
        for (let pos = 0; pos < body.length; pos += 16 * 1024) await write(frame(body.subarray(pos, pos + 16 * 1024)));
        if (opts.chunked) await write('0\r\n\r\n');
      } catch (e) {
        reject(e);
        return;
      }
      socket.resume();
    })();
  });
}
