import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManagedProcess } from '../../../tools/harness/binary';

/**
 * `ManagedProcess.logged` and `exited` against a real child (`node -e`): lines that come later,
 * in pieces, on either stream, after thousands of others, or never.
 */

/** A `node -e` child named `name` running `script`. */
function node(name: string, script: string, ...args: string[]): ManagedProcess {
  return new ManagedProcess(name, 'node', ['-e', script, ...args]);
}

/** True once `p` has settled, read after the pending callbacks have run. */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setImmediate(r));
  return settled;
}

describe('ManagedProcess.logged', () => {
  let dir: string;
  const procs: ManagedProcess[] = [];
  const started = (p: ManagedProcess) => {
    procs.push(p);
    p.start();
    return p;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'managed-process-'));
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) await p.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('resolves with a line printed after the call, as soon as it is read', async () => {
    // The child prints its last line only once the test has made the file `go`.
    const go = join(dir, 'go');
    const p = started(
      node(
        'waiter',
        `const fs = require('fs');
         console.log('waiting for go');
         const t = setInterval(() => { if (fs.existsSync(process.argv[1])) { clearInterval(t); console.log('{"msg":"went","n":1}'); } }, 10);`,
        go,
      ),
    );
    expect(await p.logged('waiting for')).toBe('waiting for go');
    const went = p.logged(/"msg":"went"/);
    expect(await settledYet(went)).toBe(false);
    writeFileSync(go, '');
    expect(JSON.parse(await went)).toEqual({ msg: 'went', n: 1 });
    // Already read: at once, and again.
    expect(await p.logged(/"msg":"went"/)).toBe('{"msg":"went","n":1}');
  });

  it('joins a line written in pieces (a character cut between its bytes) and finds lines of stderr', async () => {
    const p = started(
      node(
        'pieces',
        `const b = Buffer.from('one line in caf\\u00e9 pieces\\n');
         const cut = b.indexOf(0xc3) + 1;
         process.stdout.write(b.subarray(0, 5));
         setTimeout(() => process.stdout.write(b.subarray(5, cut)), 30);
         setTimeout(() => process.stderr.write('a warning on stderr\\n'), 60);
         setTimeout(() => process.stdout.write(b.subarray(cut)), 90);
         setTimeout(() => {}, 60000);`,
      ),
    );
    const [line, warning] = await Promise.all([p.logged('one line'), p.logged('warning')]);
    expect(line).toBe('one line in café pieces');
    expect(warning).toBe('a warning on stderr');
  });

  it('finds an early line after thousands of later writes, and the last line of a process that exits', async () => {
    // 3,000 writes, each in a turn of its own (so in chunks of their own where the machine keeps
    // up): the retention of 2,000 chunks that this replaced had dropped the first line by then.
    const p = started(
      node(
        'chatty',
        `console.log('the early line');
         let i = 0;
         const next = () => { if (i < 3000) { process.stdout.write('filler ' + i++ + '\\n'); setImmediate(next); }
                              else process.stdout.write('x'.repeat(1 << 20) + ' the last line, unended'); };
         setImmediate(next);`,
      ),
    );
    expect(await p.exited()).toBe('exit 0');
    expect(await p.logged('the early line')).toBe('the early line');
    expect(await p.logged('filler 2999')).toBe('filler 2999');
    // Written just before the exit (1 MiB: the pipe holds 64 KiB, so the exit comes before the
    // parent has read it all): read by the time `exited` resolves, and a line though unended.
    expect((await p.logged('the last line')).length).toBe((1 << 20) + ' the last line, unended'.length);
  });

  it('rejects with the last lines when the process ends without the line', async () => {
    const p = started(node('quitter', `console.log('nothing to see'); process.exitCode = 3;`));
    await expect(p.logged('fatal:')).rejects.toThrow(
      /^quitter stopped \(exit 3\) without printing a line containing "fatal:"; its last lines:\n.*nothing to see/s,
    );
    // Awaited before the end, it rejects at the end.
    const q = started(node('slow-quitter', `setTimeout(() => process.exit(4), 200);`));
    await expect(q.logged(/never/)).rejects.toThrow(
      /^slow-quitter stopped \(exit 4\) without printing a line matching \/never\//,
    );
  });

  it('rejects after its hang guard while the process runs silent, naming what it waited for', async () => {
    const p = started(node('silent', `setTimeout(() => {}, 60000);`));
    await expect(p.logged((l) => l === 'hi', { timeoutMs: 300, what: 'a greeting' })).rejects.toThrow(
      /^silent ran 0\.3 s \(a hang guard\) without printing a greeting/,
    );
    expect(p.running).toBe(true);
  });

  it("keeps the lines of earlier runs across a restart, awaits only this run's, and stop() returns with the output read to its end", async () => {
    const p = started(
      node(
        'twice',
        `const idle = setTimeout(() => {}, 60000);
         process.on('SIGTERM', () => { process.stdout.write('y'.repeat(1 << 20) + '\\nstopping ' + process.pid + '\\n'); clearTimeout(idle); });
         console.log('run at ' + process.pid);`,
      ),
    );
    const first = await p.logged('run at');
    await p.stop();
    // The line the child wrote on its way out is there without waiting.
    expect(p.logs()).toContain(`stopping ${first.slice('run at '.length)}`);
    p.start();
    // The same message of the run before is not this run's line.
    const second = await p.logged('run at');
    expect(second).not.toBe(first);
    await expect(p.logged(first, { timeoutMs: 300 })).rejects.toThrow(/^twice ran 0\.3 s \(a hang guard\)/);
    // Still kept for failure reports.
    expect(p.logs()).toContain(`${first}\n`);
  });
});
