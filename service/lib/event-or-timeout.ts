import type { EventEmitter } from 'node:events';

/**
 * Resolves true at the first of `yes` events on `emitter`, false at the first of `no` events or
 * after `ms` (an unref'd timer), whichever comes first; leaves no listener or timer behind.
 */
export function eventOrTimeout(
  emitter: EventEmitter,
  yes: readonly string[],
  no: readonly string[],
  ms: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      for (const e of yes) emitter.off(e, onYes);
      for (const e of no) emitter.off(e, onNo);
      resolve(ok);
    };
    const onYes = () => done(true);
    const onNo = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    timer.unref();
    for (const e of yes) emitter.on(e, onYes);
    for (const e of no) emitter.on(e, onNo);
  });
}
