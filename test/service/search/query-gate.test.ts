import { QueryGate } from '../../../service/search/query-gate';
import { yieldToLoop } from '../../../service/lib/yield-to-loop';
import { heldQueryAndWrite } from '../../helpers/held-query';

describe('QueryGate', () => {
  it('runs queries one at a time in arrival order, lets waiting writes in between them, and says when a write waited', async () => {
    const gate = new QueryGate();
    const log: string[] = [];
    const query = (name: string) =>
      gate.run(async () => {
        for (let slice = 0; slice < 3; slice++) {
          log.push(`${name}${slice}`);
          await yieldToLoop();
        }
        return name;
      });
    expect(await gate.quiet()).toBe(false);
    const a = query('a');
    const b = query('b');
    const write = gate.quiet().then((waited) => log.push(`write(${waited})`));
    expect(await Promise.all([a, b, write])).toEqual(['a', 'b', expect.any(Number)]);
    expect(log).toEqual(['a0', 'a1', 'a2', 'write(true)', 'b0', 'b1', 'b2']);
    expect(gate.busy).toBe(false);
  });

  it('lets the next query in after one that throws', async () => {
    const gate = new QueryGate();
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(async () => 'next')).toBe('next');
  });

  it('wakes each waiting writer and then the next query in turns of their own, so timers and I/O run between them', async () => {
    const gate = new QueryGate();
    const log: string[] = [];
    let releaseA!: () => void;
    const a = gate.run(() => new Promise<void>((resolve) => (releaseA = resolve)));
    await yieldToLoop();
    const writers = [1, 2].map((n) => gate.quiet().then(() => log.push(`write${n}`)));
    const b = gate.run(async () => void log.push('query b'));
    // An immediate that queues itself again runs once a turn of the event loop.
    let ticking = true;
    const tick = () => {
      log.push('tick');
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    releaseA();
    await Promise.all([a, b, ...writers]);
    ticking = false;
    const parties = log.filter((e) => e !== 'tick');
    expect(parties).toEqual(['write1', 'write2', 'query b']);
    // A turn between consecutive parties.
    const at = parties.map((p) => log.indexOf(p));
    for (let i = 1; i < at.length; i++) expect(log.slice(at[i - 1] + 1, at[i])).toContain('tick');
  });

  it("lets the writes waiting at a query's end in before a query that arrives while they are woken", async () => {
    const gate = new QueryGate();
    const log: string[] = [];
    const { query: a, release, write } = await heldQueryAndWrite(gate, log);
    release();
    await a;
    // The gate is free now, but the write it let in has not had its turn yet.
    const b = gate.run(async () => void log.push('query b'));
    await Promise.all([b, write]);
    expect(log).toEqual(['write', 'query b']);
  });
});
