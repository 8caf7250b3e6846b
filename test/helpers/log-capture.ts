import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { LogLevel } from '../../configs';
import { createLogger } from '../../service/lib/logger';

/** A service logger at `level` (`info` unless given) whose lines are kept, parsed, in `lines`. */
export function capture(level: LogLevel = 'info'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger(level, sink), lines };
}
