import { QueryGate } from '../../../service/search/query-gate';
import { nextTurn, TimeSlicer, yieldToLoop } from '../../../service/lib/yield-to-loop';
import { heldQueryAndWrite } from '../../helpers/held-query';

/**
 * Counts turns of the event loop: an immediate that queues itself again runs once a turn. The
 * log holds `|` at each turn and the parties' entries between them.
 */
function turns(log: string[]): () => void {
  let ticking = true;
  const tick = () => {
    log.push('|');
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  return () => (ticking = false);
}

/** The entries of each turn (between two `|`), empty turns left out. */
const perTurn = (log: readonly string[]): string[][] =>
  log
    .join(' ')
    .split('|')
    .map((t) => t.trim().split(' ').filter(Boolean))
    .filter((t) => t.length > 0);

describe('yieldToLoop', () => {
  it('resumes one sliced job a turn, in the order they yielded, however many jobs yield at once', async () => {
    const log: string[] = [];
    const stop = turns(log);
    const job = async (name: string) => {
      for (let slice = 0; slice < 3; slice++) {
        await yieldToLoop();
        log.push(`${name}${slice}`);
      }
    };
    await Promise.all(['a', 'b', 'c'].map(job));
    stop();
    expect(perTurn(log)).toEqual([['a0'], ['b0'], ['c0'], ['a1'], ['b1'], ['c1'], ['a2'], ['b2'], ['c2']]);
  });

  it('gives a TimeSlicer whose slice is used up a turn of its own (a zero slice yields at every call)', async () => {
    const log: string[] = [];
    const stop = turns(log);
    const job = async (name: string) => {
      const slicer = new TimeSlicer(0);
      for (let unit = 0; unit < 2; unit++) {
        await slicer.maybeYield();
        log.push(`${name}${unit}`);
      }
    };
    await Promise.all([job('merge'), job('write')]);
    stop();
    expect(perTurn(log)).toEqual([['merge0'], ['write0'], ['merge1'], ['write1']]);
  });

  it('shares the turns with the query gate: a woken writer, the next query and other slices each get their own', async () => {
    const gate = new QueryGate();
    const log: string[] = [];
    const { query: a, release, write } = await heldQueryAndWrite(gate, log);
    const b = gate.run(async () => void log.push('query'));
    const stop = turns(log);
    release();
    const merge = (async () => {
      for (let slice = 0; slice < 3; slice++) {
        await yieldToLoop();
        log.push(`merge${slice}`);
      }
    })();
    await Promise.all([a, b, write, merge]);
    stop();
    for (const turn of perTurn(log)) expect(turn).toHaveLength(1);
    expect(perTurn(log).flat().sort()).toEqual(['merge0', 'merge1', 'merge2', 'query', 'write']);
  });

  it("begin() runs a job's first slice in a turn of its own, not in the turn that started the job", async () => {
    const log: string[] = [];
    const stop = turns(log);
    await yieldToLoop();
    // Two jobs started in this turn (as a write is, in the turn the previous write ended in).
    log.push('caller');
    const job = async (name: string) => {
      const slicer = new TimeSlicer(10_000);
      await slicer.begin();
      log.push(name);
      // A fresh slice after begin(): no yield until it is used up.
      await slicer.maybeYield();
      log.push(`${name}-same-slice`);
    };
    await Promise.all([job('write'), job('merge')]);
    stop();
    expect(perTurn(log)).toEqual([['caller'], ['write', 'write-same-slice'], ['merge', 'merge-same-slice']]);
  });

  it('runs callbacks queued with nextTurn in order, one a turn', async () => {
    const log: string[] = [];
    const stop = turns(log);
    await new Promise<void>((resolve) => {
      nextTurn(() => log.push('1'));
      nextTurn(() => log.push('2'));
      nextTurn(() => {
        log.push('3');
        resolve();
      });
    });
    stop();
    expect(perTurn(log)).toEqual([['1'], ['2'], ['3']]);
  });
});
