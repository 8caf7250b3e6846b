import { monitorEntry } from '../../../tools/harness/redis-monitor';

describe('monitorEntry', () => {
  it('names a client command in upper case, and an ECHO with its argument', () => {
    expect(monitorEntry('+1796321496.852325 [0 127.0.0.1:59622] "info"')).toBe('INFO');
    expect(monitorEntry('+1796321496.852325 [0 127.0.0.1:59622] "echo" "end-of-count"')).toBe('ECHO end-of-count');
    expect(monitorEntry('+1.5 [3 [::1]:6000] "evalsha" "ab\\"c" "1"')).toBe('EVALSHA');
  });

  it('leaves out what a Lua script ran and lines that are not commands', () => {
    expect(monitorEntry('+1796321496.852325 [0 lua] "incr" "k"')).toBeUndefined();
    expect(monitorEntry('+OK')).toBeUndefined();
  });
});
