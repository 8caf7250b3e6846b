import pino, { type Logger } from 'pino';
import type { LogLevel } from '../../configs';
import { SERVICE_NAME } from '../../contract';

export type { Logger } from 'pino';

/** Header and field paths that may carry secrets; pino replaces them before anything is written. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'password',
  'token',
  'apiKey',
  'api_key',
  '*.password',
  '*.apiToken',
  '*.apiKey',
];

/** Structured JSON logs on stdout (or a given destination, for tests). */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: SERVICE_NAME },
      redact: { paths: REDACT_PATHS, censor: '<hidden>' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/** A logger that writes nothing, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
