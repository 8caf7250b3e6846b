import { OutputLines, describeMatch, lineMatches } from '../../../tools/harness/output-lines';

/** Every line completed, in order, as a listener sees them. */
function listen(out: OutputLines): string[] {
  const seen: string[] = [];
  out.onLine((l) => seen.push(l));
  return seen;
}

describe('OutputLines: a child process output split into lines', () => {
  it('joins a line that arrives in several chunks, and completes nothing before its newline', () => {
    const out = new OutputLines();
    const seen = listen(out);
    const stdout = out.reader();
    stdout.write(Buffer.from('{"msg":"rea'));
    expect(seen).toEqual([]);
    expect(out.find('rea')).toBeUndefined(); // an unfinished line is never a match
    stdout.write(Buffer.from('dy"}\n{"msg":"next'));
    stdout.write(Buffer.from('"}\nlast'));
    expect(seen).toEqual(['{"msg":"ready"}', '{"msg":"next"}']);
    expect(out.find('"ready"')).toBe('{"msg":"ready"}');
    expect(out.text()).toBe('{"msg":"ready"}\n{"msg":"next"}\nlast');
    // The stream's end finishes its last line.
    stdout.end();
    stdout.end();
    expect(seen).toEqual(['{"msg":"ready"}', '{"msg":"next"}', 'last']);
    expect(out.text()).toBe('{"msg":"ready"}\n{"msg":"next"}\nlast\n');
  });

  it('keeps a character whose bytes two chunks split', () => {
    const out = new OutputLines();
    const bytes = Buffer.from('café ✓\n');
    const stdout = out.reader();
    // é is 2 bytes, ✓ is 3: cut inside each.
    stdout.write(bytes.subarray(0, 4));
    stdout.write(bytes.subarray(4, 8));
    stdout.write(bytes.subarray(8));
    expect(out.find('café ✓')).toBe('café ✓');
  });

  it("splits each stream on its own: stderr's line never cuts a stdout line in two", () => {
    const out = new OutputLines();
    const seen = listen(out);
    const stdout = out.reader();
    const stderr = out.reader();
    stdout.write(Buffer.from('hel'));
    stderr.write(Buffer.from('warning\n'));
    stdout.write(Buffer.from('lo\n'));
    expect(seen).toEqual(['warning', 'hello']);
  });

  it('tests a /g pattern against every line from its start', () => {
    const out = new OutputLines();
    const stdout = out.reader();
    stdout.write(Buffer.from('a needle\nanother needle\n'));
    const g = /needle/g;
    expect(out.find(g)).toBe('a needle');
    expect(lineMatches(g, 'needle')).toBe(true);
    expect(lineMatches(g, 'needle')).toBe(true);
    expect(lineMatches((l) => l.startsWith('an'), 'another')).toBe(true);
    // A predicate that throws on a line (not JSON) does not pass it.
    expect(lineMatches((l) => (JSON.parse(l) as { msg: string }).msg === 'x', 'at Object.<anonymous>')).toBe(false);
  });

  it('names what it looks for', () => {
    expect(describeMatch('fatal:')).toBe('a line containing "fatal:"');
    expect(describeMatch(/WRONGPASS|NOAUTH/)).toBe('a line matching /WRONGPASS|NOAUTH/');
    expect(
      describeMatch(function warning() {
        return true;
      }),
    ).toBe('a line passing warning');
  });

  it('past the kept size drops the oldest lines, counts them, and a listener still sees every line', () => {
    const out = new OutputLines({ keptChars: 30 });
    const seen = listen(out);
    const stdout = out.reader();
    for (let i = 0; i < 10; i++) stdout.write(Buffer.from(`line ${i}\n`)); // 7 characters each
    expect(seen).toHaveLength(10);
    expect(out.droppedLines).toBe(6);
    expect(out.find('line 0')).toBeUndefined();
    expect(out.find('line 9')).toBe('line 9');
    expect(out.text()).toBe('line 6\nline 7\nline 8\nline 9\n');
  });

  it('numbers lines for good: find looks from a count read earlier, dropped and compacted lines included', () => {
    const out = new OutputLines({ keptChars: 64 });
    const stdout = out.reader();
    stdout.write(Buffer.from('ready\n'));
    const mark = out.count;
    expect(mark).toBe(1);
    expect(out.find('ready', mark)).toBeUndefined(); // before the mark
    stdout.write(Buffer.from('ready again\n'));
    expect(out.find('ready', mark)).toBe('ready again');
    expect(out.find('ready')).toBe('ready');
    // Past the kept size and past the compaction of the oldest 100,000 dropped lines.
    for (let i = 0; i < 250_000; i++) stdout.write(Buffer.from(`${i}\n`));
    const late = out.count;
    expect(late).toBe(250_002);
    stdout.write(Buffer.from('ready at last\n'));
    expect(out.find('ready', late)).toBe('ready at last');
    expect(out.find('249999', late)).toBeUndefined();
    expect(out.find('249999', late - 1)).toBe('249999');
  });
});
