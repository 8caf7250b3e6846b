import { QueryGate } from '../../../service/search/query-gate';
import { yieldToLoop } from '../../../service/search/yield-to-loop';

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
});
