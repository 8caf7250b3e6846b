import { appendFileSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { FileContentStore } from '../../../../service/content/file-store/file-content-store';
import type { Item } from '../../../../service/content/item';
import { encodeRecord } from '../../../../service/content/file-store/record-log';

/**
 * Durability against damage: N acknowledged items written through the real FileContentStore, the
 * files damaged on disk, the store reopened. Every item whose record is still intact must load;
 * the damage must be logged. The expected set comes from splitting the files into lines before
 * the damage (a record is one line), not from the reader under test.
 */

interface LogLine {
  level: number;
  msg: string;
  file?: string;
  damagedRanges?: Array<{ start: number; end: number }>;
  droppedRange?: { start: number; end: number };
}

function capture(): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  return { logger: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as LogLine) }), lines };
}

const item = (id: string): Item => ({
  id,
  type: 'article',
  title: `title ${id}`,
  body: `body of ${id}, with a newline\nand unicode é`,
  tags: ['t'],
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
});

/** One record of a file: its byte range and the item ids it holds. */
interface Line {
  start: number;
  end: number;
  ids: string[];
}

function linesOf(buf: Buffer): Line[] {
  const out: Line[] = [];
  let start = 0;
  for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a, start)) {
    const text = buf.toString('utf8', start, nl);
    const json = JSON.parse(text.slice(text.indexOf(' ', text.indexOf(' ') + 1) + 1)) as { items?: Item[] };
    out.push({ start, end: nl + 1, ids: (json.items ?? []).map((i) => i.id) });
    start = nl + 1;
  }
  return out;
}

const N = 1200;
const BATCH = 10;

describe('FileContentStore durability against damage', () => {
  let dir: string;
  let acked: string[];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'durability-'));
    acked = [];
    // A small compaction threshold: the folder ends as one snapshot of several chunks plus a log.
    const store = new FileContentStore({ dir, logger: pino({ level: 'silent' }), compactAfterBytes: 1024 });
    await store.load();
    for (let b = 0; b < N / BATCH; b++) {
      const batch = Array.from({ length: BATCH }, (_, i) => item(`b${b}-${i}`));
      await store.write(batch);
      acked.push(...batch.map((i) => i.id));
    }
    await store.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const files = () => {
    const names = readdirSync(dir);
    const snapshot = names.find((n) => /^content-\d+\.snapshot$/.test(n))!;
    const log = names.find((n) => /^content-\d+\.log$/.test(n))!;
    return { snapshot: join(dir, snapshot), log: join(dir, log) };
  };

  /** Opens the store, checks it loaded exactly `expected`, writes more and checks a clean reopen. */
  async function reopenExpecting(expected: readonly string[]): Promise<LogLine[]> {
    const { logger, lines } = capture();
    const store = new FileContentStore({ dir, logger, compactAfterBytes: 1024 });
    const loaded = await store.load();
    expect(loaded.map((i) => i.id).sort()).toEqual([...expected].sort());
    for (const i of loaded) expect(i).toEqual(item(i.id));
    // Appends after the damage are readable: never glued onto damaged bytes.
    await store.write([item('after-1')]);
    await store.write([item('after-2'), item('after-3')]);
    await store.close();
    const again = capture();
    const second = new FileContentStore({ dir, logger: again.logger });
    expect((await second.load()).map((i) => i.id).sort()).toEqual(
      [...expected, 'after-1', 'after-2', 'after-3'].sort(),
    );
    await second.close();
    // The first start rewrote or repaired the files: the second one finds nothing to report.
    expect(again.lines.filter((l) => l.level >= 40)).toEqual([]);
    return lines;
  }

  const without = (lost: readonly string[]) => acked.filter((id) => !lost.includes(id));

  it('has a snapshot of several chunks and a log of several records to damage', () => {
    const { snapshot, log } = files();
    expect(linesOf(readFileSync(snapshot)).filter((l) => l.ids.length).length).toBeGreaterThanOrEqual(2);
    expect(linesOf(readFileSync(log)).length).toBeGreaterThanOrEqual(10);
  });

  it('a flipped byte mid-log costs that record only; every later acknowledged write loads', async () => {
    const { log } = files();
    const buf = readFileSync(log);
    const records = linesOf(buf);
    const victim = records[Math.floor(records.length / 2)]!;
    buf[victim.start + Math.floor((victim.end - victim.start) / 2)]! ^= 0x10;
    writeFileSync(log, buf);
    const lines = await reopenExpecting(without(victim.ids));
    const error = lines.find((l) => l.level === 50 && l.msg.startsWith(`content log ${log} is damaged`));
    expect(error?.damagedRanges).toEqual([{ start: victim.start, end: victim.end }]);
    expect(readdirSync(dir)).toContain(`${log.slice(dir.length + 1)}.damaged`);
  });

  it('a torn tail is cut, only the tail, and logged', async () => {
    const { log } = files();
    const size = readFileSync(log).length;
    const half = encodeRecord({ op: 'put', items: [item('never-acked')] });
    appendFileSync(log, half.subarray(0, half.length - 5));
    const lines = await reopenExpecting(acked);
    const warn = lines.find((l) => l.level === 40 && l.msg.startsWith('content log ends with an incomplete write'));
    expect(warn?.droppedRange).toEqual({ start: size, end: size + half.length - 5 });
  });

  it('garbage at the start of the log loses nothing', async () => {
    const { log } = files();
    const garbage = Buffer.from('\u0000\u0000\u0000garbage 17 deadbeef {"op":"put"\n');
    writeFileSync(log, Buffer.concat([garbage, readFileSync(log)]));
    const lines = await reopenExpecting(acked);
    expect(lines.find((l) => l.level === 50 && l.file === log)?.damagedRanges).toEqual([
      { start: 0, end: garbage.length },
    ]);
  });

  it('garbage at the start of the snapshot loses nothing', async () => {
    const { snapshot } = files();
    const garbage = Buffer.from('zzzz');
    writeFileSync(snapshot, Buffer.concat([garbage, readFileSync(snapshot)]));
    const lines = await reopenExpecting(acked);
    const error = lines.find((l) => l.level === 50 && l.msg.startsWith(`content snapshot ${snapshot} is damaged`));
    expect(error?.damagedRanges).toEqual([{ start: 0, end: garbage.length }]);
  });

  it('a damaged snapshot chunk costs that chunk only: the other chunks and every log record load', async () => {
    const { snapshot } = files();
    const buf = readFileSync(snapshot);
    const chunks = linesOf(buf).filter((l) => l.ids.length);
    const victim = chunks[chunks.length - 1]!;
    buf[victim.end - 10]! ^= 0x01;
    writeFileSync(snapshot, buf);
    const lines = await reopenExpecting(without(victim.ids));
    const error = lines.find((l) => l.level === 50 && l.msg.startsWith(`content snapshot ${snapshot} is damaged`));
    expect(error?.msg).toContain(`${victim.ids.length} items in damaged records are not loaded`);
    expect(error?.damagedRanges).toEqual([{ start: victim.start, end: victim.end }]);
    expect(readdirSync(dir)).toContain(`${snapshot.slice(dir.length + 1)}.damaged`);
  });

  it('a missing snapshot starts from the log, says so, and putting the file back (its advice) restores everything', async () => {
    const { snapshot, log } = files();
    const inLog = linesOf(readFileSync(log)).flatMap((l) => l.ids);
    const aside = join(tmpdir(), `moved-away-${process.pid}-${Date.now()}.snapshot`);
    renameSync(snapshot, aside);
    try {
      const lines = await reopenExpecting(inLog);
      const error = lines.find((l) => l.level === 50 && l.msg.startsWith(`content snapshot ${snapshot} is missing`));
      expect(error?.msg).toContain('put that file (or a backup of it) into DATA_DIR under the same name and restart');
      renameSync(aside, snapshot);
    } finally {
      rmSync(aside, { force: true });
    }
    const { logger } = capture();
    const store = new FileContentStore({ dir, logger });
    expect((await store.load()).map((i) => i.id).sort()).toEqual([...acked, 'after-1', 'after-2', 'after-3'].sort());
    await store.close();
  });

  it('several kinds of damage at once: each costs only what it hit', async () => {
    const { snapshot, log } = files();
    const logBuf = readFileSync(log);
    const logVictim = linesOf(logBuf)[1]!;
    logBuf[logVictim.start + 1] = 0x78; // a length digit becomes 'x'
    const snapBuf = readFileSync(snapshot);
    const snapVictim = linesOf(snapBuf).filter((l) => l.ids.length)[0]!;
    snapBuf[snapVictim.end - 1] = 0x20; // its newline becomes a space
    writeFileSync(snapshot, snapBuf);
    writeFileSync(log, Buffer.concat([logBuf, Buffer.from('17 0000')]));
    const lines = await reopenExpecting(without([...logVictim.ids, ...snapVictim.ids]));
    expect(lines.filter((l) => l.level === 50).map((l) => l.msg.slice(0, l.msg.indexOf(':')))).toEqual([
      `content snapshot ${snapshot} is damaged`,
      `content log ${log} is damaged`,
    ]);
    expect(lines.some((l) => l.level === 40 && l.msg.startsWith('content log ends with an incomplete write'))).toBe(
      true,
    );
  });
});
