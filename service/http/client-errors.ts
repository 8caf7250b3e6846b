import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * How long a refused connection stays open after its answer, ms: closing at once while the
 * client is still sending resets the connection, and a reset may discard the answer before the
 * client reads it.
 */
export const CLIENT_ERROR_LINGER_MS = 1000;

/** What `clientErrorAnswer` needs to know to explain a refusal. */
export interface ClientErrorLimits {
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** Node's limit on the request line and headers together, bytes. */
  readonly maxHeaderSize: number;
}

/** A refusal Node makes before any route runs, in our error shape. */
export interface ClientErrorAnswer {
  readonly status: number;
  readonly body: { readonly error: string; readonly message: string; readonly field: string };
}

/**
 * The answer to an error Node's HTTP parser or its timeouts raised (the server's `clientError`
 * event), or undefined when there is no one to answer (the client reset the connection). Node's
 * own answers are bare (`HTTP/1.1 431`, `408` with no body and no Content-Type); ours are the
 * `{error, message, field}` every other refusal carries. `inBody`: the request's headers were
 * read (a route was running) when it timed out.
 */
export function clientErrorAnswer(
  err: NodeJS.ErrnoException,
  limits: ClientErrorLimits,
  inBody: boolean,
): ClientErrorAnswer | undefined {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        body: {
          error: 'headers_too_large',
          message: `the request line and headers are over ${limits.maxHeaderSize} bytes together: send a shorter query string (search with POST and a JSON body), or fewer or shorter headers`,
          field: 'headers',
        },
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return inBody
        ? {
            status: 408,
            body: {
              error: 'request_timeout',
              message: `the request body did not arrive in full within ${limits.requestTimeoutMs} ms (REQUEST_TIMEOUT_MS); send it whole, without pauses`,
              field: 'body',
            },
          }
        : {
            status: 408,
            body: {
              error: 'request_timeout',
              message: `the request headers did not arrive in full within ${limits.headersTimeoutMs} ms (HEADERS_TIMEOUT_MS); send them whole, without pauses`,
              field: 'headers',
            },
          };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        body: { error: 'payload_too_large', message: 'the chunk extensions of the body are too large', field: 'body' },
      };
    default:
      return {
        status: 400,
        body: {
          error: 'bad_request',
          message: `the request is not valid HTTP/1.1 (${err.code ?? err.message})`,
          field: 'request',
        },
      };
  }
}

/** The raw HTTP/1.1 answer of `a`, closing the connection. */
export function rawAnswer(a: ClientErrorAnswer): string {
  const json = JSON.stringify(a.body);
  return (
    `HTTP/1.1 ${a.status} ${STATUS_CODES[a.status] ?? ''}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(json)}\r\n` +
    'Cache-Control: no-store\r\n' +
    'X-Content-Type-Options: nosniff\r\n' +
    'Connection: close\r\n' +
    `\r\n${json}`
  );
}

/**
 * Answers the errors Node raises before a route runs (oversized headers, request and headers
 * timeouts, malformed HTTP) with our JSON error shape instead of Node's bare status lines, on the
 * server's `clientError` event. A connection whose answer has already begun (a route wrote its
 * headers) is closed without a second answer, as Node does. The connection closes after the
 * answer, `CLIENT_ERROR_LINGER_MS` later at most.
 */
export function answerClientErrors(server: Server, limits: ClientErrorLimits): void {
  // The answer each connection is on, to tell a timeout in the body from one in the headers and
  // never to write over an answer that has begun.
  const current = new WeakMap<Socket, ServerResponse>();
  const answered = new WeakSet<Duplex>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => current.set(req.socket, res));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    const res = current.get(socket as Socket);
    const running = res !== undefined && !res.writableFinished;
    const answer = clientErrorAnswer(err, limits, running);
    if (!answer || !socket.writable || (running && res.headersSent)) {
      socket.destroy();
      return;
    }
    // The rest of what the client sends is read and dropped, not parsed again as HTTP.
    socket.removeAllListeners('data');
    socket.on('data', () => undefined);
    socket.resume();
    socket.end(rawAnswer(answer));
    const timer = setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
