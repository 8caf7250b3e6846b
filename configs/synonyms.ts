import { readFileSync } from 'node:fs';
import { SettingsError, type SettingsIssue } from './errors';

/** The variable that names the synonyms file (configs/sections/search.ts). */
export const SYNONYMS_VARIABLE = 'SEARCH_SYNONYMS_FILE';

/** What a synonyms file may hold, for error messages and docs/api.md#synonyms. */
export const SYNONYMS_ACCEPTED =
  "a readable file in Solr's synonyms format: one rule a line, `a, b, c` (equivalents) or `a, b => c, d` (one-way: a query for a or b also searches c and d); " +
  'a line starting with # is a comment, blank lines are ignored, `\\,` is a comma inside a word, `\\#` a # and `\\\\` a backslash';

/** One line of a synonyms file: phrases (one or more words each), as written, escapes resolved. */
export interface SynonymRule {
  /** Line of the file, from 1. */
  readonly line: number;
  /** The phrases a query may hold. */
  readonly from: readonly string[];
  /** The phrases a query holding one of `from` also searches; equal to `from` for equivalents. */
  readonly to: readonly string[];
}

/** A synonyms file as read: where it is and its rules. */
export interface SynonymsFile {
  /** The path it was read from (`SEARCH_SYNONYMS_FILE`). */
  readonly path: string;
  /** The file's text, as read (the stack's ConfigMap holds it). */
  readonly text: string;
  readonly rules: readonly SynonymRule[];
}

/** The issue of a synonyms file that cannot be used: the variable, the path, the line and what is accepted. */
export function synonymsIssue(path: string, reason: string, line?: number): SettingsIssue {
  const value = JSON.stringify(path);
  const where = line === undefined ? '' : ` line ${line}`;
  return {
    code: 'ERR_SETTINGS_INVALID_VALUE',
    variable: SYNONYMS_VARIABLE,
    value,
    message: `${SYNONYMS_VARIABLE}=${value}${where}: ${reason}; expected ${SYNONYMS_ACCEPTED}`,
  };
}

/**
 * Splits `text` at each unescaped `sep`; a backslash escapes the next character (Lucene's
 * `SolrSynonymParser.split`). Parts are trimmed and unescaped; empty ones are kept (the caller
 * decides what an empty part means).
 */
function splitEscaped(text: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      cur += text[i + 1];
      i++;
    } else if (text.startsWith(sep, i)) {
      parts.push(cur.trim());
      cur = '';
      i += sep.length - 1;
    } else cur += c;
  }
  parts.push(cur.trim());
  return parts;
}

/** The index of the first unescaped occurrence of `s` in `text`, or -1. */
function unescapedIndex(text: string, s: string, from = 0): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text.startsWith(s, i)) return i;
  }
  return -1;
}

/** The phrases of one side of a rule (commas between them, empty entries dropped, as Solr drops them). */
function phrases(side: string): string[] {
  return splitEscaped(side, ',').filter((p) => p.length > 0);
}

/** The rule of one line, or the reason it is malformed. */
function parseLine(line: string, n: number): SynonymRule | string {
  if (unescapedIndex(line, '#') >= 0)
    return `"${line.trim()}": # starts a comment only at the start of a line (write \\# for the character)`;
  const arrow = unescapedIndex(line, '=>');
  if (arrow < 0) {
    const group = phrases(line);
    if (!group.length) return `"${line.trim()}" is an empty group`;
    return { line: n, from: group, to: group };
  }
  if (unescapedIndex(line, '=>', arrow + 2) >= 0) return `"${line.trim()}" has more than one =>`;
  const from = phrases(line.slice(0, arrow));
  const to = phrases(line.slice(arrow + 2));
  if (!from.length) return `"${line.trim()}" has nothing before =>`;
  if (!to.length) return `"${line.trim()}" has nothing after =>`;
  return { line: n, from, to };
}

/**
 * The rules of a synonyms file in Solr's format (Lucene's `SolrSynonymParser`): one rule a line,
 * `a, b, c` (equivalents) or `a, b => c` (one-way); a line whose first non-blank character is `#`
 * is a comment; blank lines are ignored; `\` escapes the next character. Words are not analysed
 * here (the service analyses them at load, `SynonymTable`). Throws `SettingsError` naming
 * `SEARCH_SYNONYMS_FILE`, `path` and the line of every malformed rule.
 */
export function parseSynonyms(text: string, path: string): SynonymRule[] {
  const rules: SynonymRule[] = [];
  const issues: SettingsIssue[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) return;
    const rule = parseLine(line, i + 1);
    if (typeof rule === 'string') issues.push(synonymsIssue(path, rule, i + 1));
    else rules.push(rule);
  });
  if (issues.length) throw new SettingsError(issues);
  return rules;
}

/**
 * Reads and parses the synonyms file `path` (`SEARCH_SYNONYMS_FILE`); undefined: no synonyms.
 * The service reads it once at start (changing it takes a restart, no re-index) and `cdk8s synth`
 * reads it for the ConfigMap; both throw `SettingsError` for a missing or malformed file.
 */
export function readSynonymsFile(path: string | undefined): SynonymsFile | undefined {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new SettingsError([synonymsIssue(path, `cannot be read (${why})`)]);
  }
  return { path, text, rules: parseSynonyms(text, path) };
}
