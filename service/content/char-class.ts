/**
 * Character classes of JavaScript regular expressions, for the single-pass text scanners that
 * replace backtracking patterns over user text (plain text, upload headings, snippets).
 */

/** `\s` of regular expressions (white space and line terminators), by UTF-16 code unit. */
export function isSpace(c: number): boolean {
  return (
    c === 0x20 ||
    (c >= 0x09 && c <= 0x0d) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Line terminators: where `^` and `$` match with the m flag, and what `.` does not match. */
export function isLineEnd(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
}
