import { EventEmitter } from 'node:events';
import { capture } from '../helpers/log-capture';
import { installProcessGuard, type ProcessEvents } from '../../service/process-guard';

describe('installProcessGuard', () => {
  it('logs an escaped exception and a stray rejection at error level, with the stack, and counts them', () => {
    const proc = new EventEmitter();
    const { logger, lines } = capture();
    const guard = installProcessGuard(logger, proc as unknown as ProcessEvents);
    proc.emit('uncaughtException', new Error('stream blew up'), 'uncaughtException');
    proc.emit('unhandledRejection', new Error('nobody awaited me'));
    expect(guard.escaped).toBe(2);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 50,
      origin: 'uncaughtException',
      escaped: 1,
      err: { message: 'stream blew up' },
    });
    expect(String((lines[0].err as { stack: string }).stack)).toContain('stream blew up');
    expect(lines[1]).toMatchObject({
      level: 50,
      origin: 'unhandledRejection',
      escaped: 2,
      err: { message: 'nobody awaited me' },
    });
  });

  it('uninstall removes both listeners', () => {
    const proc = new EventEmitter();
    const guard = installProcessGuard(capture().logger, proc as unknown as ProcessEvents);
    expect(proc.listenerCount('uncaughtException')).toBe(1);
    guard.uninstall();
    expect(proc.listenerCount('uncaughtException')).toBe(0);
    expect(proc.listenerCount('unhandledRejection')).toBe(0);
  });
});
