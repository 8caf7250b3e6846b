import { COMMAND_TIMED_OUT, Deadlines, type Expirable } from '../../../service/ratelimit/deadlines';
import { isCommandTimeout } from '../../../service/kvstore/connection';

/** An item that records how it ended. */
class Item implements Expirable {
  settled = false;
  error: unknown;
  fail(err: unknown): void {
    this.settled = true;
    this.error = err;
  }
  answer(): void {
    this.settled = true;
  }
}

describe('Deadlines', () => {
  let now = 0;
  beforeEach(() => {
    jest.useFakeTimers();
    now = 0;
  });
  afterEach(() => jest.useRealTimers());
  const advance = (ms: number) => {
    now += ms;
    jest.advanceTimersByTime(ms);
  };

  it('fails an unanswered item with the timeout ioredis reports, once its own deadline passes', () => {
    const d = new Deadlines(100, () => now);
    const item = new Item();
    d.track(item);
    advance(99);
    expect(item.settled).toBe(false);
    advance(1);
    expect(item.error).toBeInstanceOf(Error);
    expect((item.error as Error).message).toBe(COMMAND_TIMED_OUT);
    expect(isCommandTimeout(item.error)).toBe(true);
    expect(d.size).toBe(0);
  });

  it('leaves answered items alone, and fails later items at their own deadlines, not the first one', () => {
    const d = new Deadlines(100, () => now);
    const first = new Item();
    const second = new Item();
    const third = new Item();
    d.track(first);
    advance(40);
    d.track(second);
    advance(30);
    d.track(third);
    first.answer();
    advance(30);
    expect(first.error).toBeUndefined();
    expect(second.settled).toBe(false);
    advance(40);
    expect(second.error).toBeDefined();
    expect(third.settled).toBe(false);
    advance(30);
    expect(third.error).toBeDefined();
  });

  it('uses one timer for many items in flight, and none when nothing is', () => {
    const d = new Deadlines(100, () => now);
    const items = Array.from({ length: 1000 }, () => new Item());
    for (const item of items) d.track(item);
    expect(jest.getTimerCount()).toBe(1);
    for (const item of items) item.answer();
    advance(100);
    expect(jest.getTimerCount()).toBe(0);
    expect(d.size).toBe(0);
    expect(items.every((i) => i.error === undefined)).toBe(true);
  });

  it('close stops the timer', () => {
    const d = new Deadlines(100, () => now);
    const item = new Item();
    d.track(item);
    d.close();
    advance(200);
    expect(item.settled).toBe(false);
  });
});
