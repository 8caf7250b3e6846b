import { stepper } from '../../service/time-steps';

describe('stepper', () => {
  it('goes on at once within the budget and yields a turn of the event loop past it', async () => {
    expect(stepper(60_000)()).toBeUndefined();
    const step = stepper(0);
    let turned = false;
    setImmediate(() => (turned = true));
    const pause = step();
    expect(pause).toBeInstanceOf(Promise);
    await pause;
    // Other callbacks of the loop ran before the work went on.
    expect(turned).toBe(true);
  });
});
