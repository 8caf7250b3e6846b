import type { Request } from 'express';
import { HttpError, badRequest } from './errors';

/** The JSON body as an object, or 415/400 saying what to send. */
export function jsonObject(req: Request, example: string): Record<string, unknown> {
  if (!req.is('application/json') && !req.is('application/*+json')) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      `send JSON with Content-Type: application/json, e.g. ${example}`,
    );
  }
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest(`the body must be a JSON object, e.g. ${example}`, { field: 'body' });
  }
  return body as Record<string, unknown>;
}
