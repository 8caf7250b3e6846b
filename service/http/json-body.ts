import express, { type RequestHandler } from 'express';

/**
 * The JSON body parser (`express.json`) for the requests that have a body. A request without
 * `Content-Length` and `Transfer-Encoding` has none (RFC 9112 §6.3; type-is's `hasBody`, which
 * body-parser asks itself), so it goes straight on with `req.body` undefined, exactly as
 * body-parser would leave it, without body-parser's own checks: most of the API is GETs, and
 * those checks cost more than the rest of the route for the cheapest of them.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  const parse = express.json({ limit: limitBytes, type: ['application/json', 'application/*+json'] });
  return (req, res, next) => {
    const headers = req.headers;
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) next();
    else parse(req, res, next);
  };
}
