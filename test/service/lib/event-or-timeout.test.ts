import { EventEmitter } from 'node:events';
import { eventOrTimeout } from '../../../service/lib/event-or-timeout';

describe('eventOrTimeout', () => {
  it('resolves true at a yes event, false at a no event or the timeout, and leaves no listener behind', async () => {
    const e = new EventEmitter();
    const yes = eventOrTimeout(e, ['ready', 'close'], ['end'], 10_000);
    e.emit('close');
    expect(await yes).toBe(true);
    const no = eventOrTimeout(e, ['ready'], ['end'], 10_000);
    e.emit('end');
    e.emit('ready');
    expect(await no).toBe(false);
    expect(await eventOrTimeout(e, ['ready'], ['end'], 5)).toBe(false);
    for (const name of ['ready', 'close', 'end']) expect(e.listenerCount(name)).toBe(0);
  });
});
