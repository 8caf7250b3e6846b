import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Settings } from '../../configs';
import { HttpError } from '../http/errors';
import { SERVICE_NAME } from '../../contract';

/** How write endpoints (ingest, ingest-batch, upload) are guarded. */
export type WriteAccess = 'token' | 'open' | 'refused';

/**
 * `token` when `API_TOKEN` is set; without one, `open` in development and testing (the service
 * logs a warning at start) and `refused` in staging and production.
 */
export function writeAccess(settings: Settings): WriteAccess {
  if (settings.service.apiToken) return 'token';
  const env = settings.service.environment;
  return env === 'development' || env === 'testing' ? 'open' : 'refused';
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Requires `Authorization: Bearer <API_TOKEN>`: 401 without a bearer token, 403 with a wrong
 * one (compared in constant time), 403 `writes_disabled` when writes are refused.
 */
export function requireWriteAccess(settings: Settings): RequestHandler {
  const access = writeAccess(settings);
  const expected = settings.service.apiToken ? digest(settings.service.apiToken) : undefined;
  return (req, res, next) => {
    if (access === 'open') return next();
    if (access === 'refused') {
      return next(
        new HttpError(
          403,
          'writes_disabled',
          `writes are disabled: no API_TOKEN is set in ${settings.service.environment}; set API_TOKEN to a secret and send it as "Authorization: Bearer <token>"`,
        ),
      );
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
    if (!m) {
      res.set('WWW-Authenticate', `Bearer realm="${SERVICE_NAME}"`);
      return next(new HttpError(401, 'unauthorized', 'this endpoint needs "Authorization: Bearer <API_TOKEN>"'));
    }
    if (!timingSafeEqual(digest(m[1]), expected!)) {
      return next(new HttpError(403, 'forbidden', 'the bearer token is not valid'));
    }
    next();
  };
}
