/**
 * The character codes that the byte-level scanners compare against (a Buffer's bytes, or a
 * string's `charCodeAt`): JSON's structure in the content catalogue (content/file-store/), the
 * stepped JSON array parse (content/parse/), the record log's length lines and the vector file's
 * ids section (search/vectors/). One name for each, here.
 */
export const TAB = 0x09;
export const NEWLINE = 0x0a;
export const CARRIAGE_RETURN = 0x0d;
export const SPACE = 0x20;
export const QUOTE = 0x22;
export const COMMA = 0x2c;
export const DIGIT_0 = 0x30;
export const DIGIT_9 = 0x39;
export const COLON = 0x3a;
export const OPEN_ARRAY = 0x5b;
export const BACKSLASH = 0x5c;
export const CLOSE_ARRAY = 0x5d;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
