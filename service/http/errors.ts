import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { answerThenDrain, type DrainOptions } from './drain';

/**
 * An error with an HTTP status and a stable machine-readable `error` code. Route handlers throw
 * it (or pass it to `next`); the error handler renders `{error, message}`.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** 400 with the field named. */
export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new HttpError(400, 'bad_request', message, details);

/** Unknown paths: 404 JSON. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new HttpError(404, 'not_found', `no route for ${req.method} ${req.path}`));
};

interface BodyParserError {
  type?: string;
  status?: number;
  statusCode?: number;
  expose?: boolean;
  limit?: number;
}

/**
 * Maps body-parser and HttpErrors to their status, and a path that cannot be percent-decoded
 * (the router's `URIError`) to 400; anything else is a 500 without details. An
 * error answered before the request body was read (an upload over the limit, a refused token)
 * goes through `answerThenDrain`, so the client can read it while it is still sending.
 */
export function errorHandler(logger: Logger, drain: DrainOptions = {}): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    let status = 500;
    let body: Record<string, unknown> = { error: 'internal_error', message: 'an unexpected error occurred' };
    if (err instanceof HttpError) {
      status = err.status;
      body = { error: err.code, message: err.message, ...(err.details ?? {}) };
    } else {
      const e = (err ?? {}) as BodyParserError;
      if (err instanceof URIError) {
        // The router decodes path parameters with decodeURIComponent: `%zz` or a lone `%` is the client's fault.
        status = 400;
        body = { error: 'bad_request', message: `the URL path holds malformed percent-encoding: ${req.path}` };
      } else if (e.type === 'entity.parse.failed') {
        status = 400;
        body = { error: 'invalid_json', message: 'request body is not valid JSON' };
      } else if (e.type === 'entity.too.large') {
        status = 413;
        body = { error: 'payload_too_large', message: `request body exceeds the limit of ${e.limit} bytes` };
      } else if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
        status = 415;
        body = { error: 'unsupported_encoding', message: 'request body encoding is not supported' };
      } else if (e.expose && typeof (e.status ?? e.statusCode) === 'number' && (e.status ?? e.statusCode)! < 500) {
        status = (e.status ?? e.statusCode)!;
        body = { error: 'bad_request', message: String((err as Error).message) };
      }
    }
    if (status >= 500) logger.error({ err, method: req.method, path: req.path }, 'request failed');
    if (!req.complete) answerThenDrain(req, res, status, body, drain);
    else res.status(status).json(body);
  };
}
