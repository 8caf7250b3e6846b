import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  loadSettings,
  parseSynonyms,
  readSynonymsFile,
  SettingsError,
  SYNONYMS_ACCEPTED,
  type SynonymRule,
} from '../../configs';

const FILE = '/etc/synonyms.txt';

/** The rules of `text` as plain data (line, from, to). */
const rules = (text: string): Array<Pick<SynonymRule, 'line' | 'from' | 'to'>> =>
  parseSynonyms(text, FILE).map(({ line, from, to }) => ({ line, from: [...from], to: [...to] }));

/** The SettingsError `parseSynonyms(text)` throws. */
function errorOf(text: string): SettingsError {
  try {
    parseSynonyms(text, FILE);
  } catch (e) {
    if (e instanceof SettingsError) return e;
    throw e;
  }
  throw new Error(`no error for ${JSON.stringify(text)}`);
}

describe("parseSynonyms: Solr's synonyms format", () => {
  it('reads equivalents and one-way rules, one a line, with their line numbers', () => {
    expect(rules('car, automobile, motor car\nphone => telephone, handset\n')).toEqual([
      { line: 1, from: ['car', 'automobile', 'motor car'], to: ['car', 'automobile', 'motor car'] },
      { line: 2, from: ['phone'], to: ['telephone', 'handset'] },
    ]);
  });

  it('reads several phrases on the left of =>', () => {
    expect(rules('i-pod, i pod => ipod')).toEqual([{ line: 1, from: ['i-pod', 'i pod'], to: ['ipod'] }]);
  });

  it('skips comments and blank lines, trims whitespace, drops empty entries (as Solr does)', () => {
    const text = '# a comment\n\n   \n  # indented comment\n\t tv ,  television ,, \r\nfoo=>bar\n';
    expect(rules(text)).toEqual([
      { line: 5, from: ['tv', 'television'], to: ['tv', 'television'] },
      { line: 6, from: ['foo'], to: ['bar'] },
    ]);
  });

  it('resolves escapes: \\, is a comma in a word, \\# a #, \\= keeps => from splitting', () => {
    expect(rules('a\\,b, c\\#d\nx \\=> y, z')).toEqual([
      { line: 1, from: ['a,b', 'c#d'], to: ['a,b', 'c#d'] },
      { line: 2, from: ['x => y', 'z'], to: ['x => y', 'z'] },
    ]);
  });

  it.each([
    ['a =>', 'line 1: "a =>" has nothing after =>'],
    ['=> b', 'line 1: "=> b" has nothing before =>'],
    [' , , ', 'line 1: ", ," is an empty group'],
    ['a => b => c', 'line 1: "a => b => c" has more than one =>'],
    ['a, b # note', 'line 1: "a, b # note": # starts a comment only at the start of a line'],
    ['ok, fine\n\nx, =>  ,', 'line 3: "x, =>  ," has nothing after =>'],
  ])('refuses %j, naming the variable, the file, the line and what is accepted', (text, where) => {
    const e = errorOf(text);
    expect(e.code).toBe('ERR_SETTINGS_INVALID_VALUE');
    expect(e.issues[0].variable).toBe('SEARCH_SYNONYMS_FILE');
    expect(e.issues[0].value).toBe(JSON.stringify(FILE));
    expect(e.message).toContain(`SEARCH_SYNONYMS_FILE="${FILE}" ${where}`);
    expect(e.message).toContain(`expected ${SYNONYMS_ACCEPTED}`);
  });

  it('names every malformed line at once', () => {
    const e = errorOf('a =>\nfine, ok\n=> b\n');
    expect(e.issues.map((i) => /line (\d+)/.exec(i.message)?.[1])).toEqual(['1', '3']);
  });
});

describe('SEARCH_SYNONYMS_FILE', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'synonyms-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is unset by default: no synonyms', () => {
    expect(loadSettings({}).search.synonymsFile).toBeUndefined();
    expect(readSynonymsFile(undefined)).toBeUndefined();
  });

  it('is a path; the file is read with its text and rules', () => {
    const path = join(dir, 'ok.txt');
    writeFileSync(path, 'car, automobile\n');
    expect(loadSettings({ SEARCH_SYNONYMS_FILE: path }).search.synonymsFile).toBe(path);
    const file = readSynonymsFile(path)!;
    expect(file.path).toBe(path);
    expect(file.text).toBe('car, automobile\n');
    expect(file.rules.map((r) => r.from)).toEqual([['car', 'automobile']]);
  });

  it('refuses a file that cannot be read, naming it', () => {
    const path = join(dir, 'missing.txt');
    expect(() => readSynonymsFile(path)).toThrow(
      `SEARCH_SYNONYMS_FILE=${JSON.stringify(path)}: cannot be read (ENOENT)`,
    );
  });
});
