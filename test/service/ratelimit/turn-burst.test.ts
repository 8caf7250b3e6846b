import { TurnBurst } from '../../../service/ratelimit/turn-burst';

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('TurnBurst', () => {
  it("runs a turn's first job at once and holds the others to the end of the turn, in order", async () => {
    const burst = new TurnBurst(() => undefined);
    const ran: number[] = [];
    burst.run(() => ran.push(1));
    burst.run(() => ran.push(2));
    burst.run(() => ran.push(3));
    expect(ran).toEqual([1]);
    await endOfTurn();
    expect(ran).toEqual([1, 2, 3]);
  });

  it('a new turn starts with a job run at once again', async () => {
    const burst = new TurnBurst(() => undefined);
    const ran: string[] = [];
    burst.run(() => ran.push('a'));
    await endOfTurn();
    burst.run(() => ran.push('b'));
    expect(ran).toEqual(['a', 'b']);
    burst.run(() => ran.push('c'));
    expect(ran).toEqual(['a', 'b']);
    await endOfTurn();
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('a held job that throws is reported and the jobs after it still run', async () => {
    const errors: unknown[] = [];
    const burst = new TurnBurst((err) => errors.push(err));
    const ran: number[] = [];
    burst.run(() => ran.push(1));
    burst.run(() => {
      throw new Error('boom');
    });
    burst.run(() => ran.push(3));
    await endOfTurn();
    expect(ran).toEqual([1, 3]);
    expect(errors).toEqual([new Error('boom')]);
  });
});
