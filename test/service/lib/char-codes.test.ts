import * as codes from '../../../service/lib/char-codes';

describe('char-codes', () => {
  it.each([
    ['TAB', '\t'],
    ['NEWLINE', '\n'],
    ['CARRIAGE_RETURN', '\r'],
    ['SPACE', ' '],
    ['QUOTE', '"'],
    ['COMMA', ','],
    ['DIGIT_0', '0'],
    ['DIGIT_9', '9'],
    ['COLON', ':'],
    ['OPEN_ARRAY', '['],
    ['BACKSLASH', '\\'],
    ['CLOSE_ARRAY', ']'],
    ['OPEN_OBJECT', '{'],
    ['CLOSE_OBJECT', '}'],
  ] as const)('%s is the code of %j', (name, char) => {
    expect(codes[name]).toBe(char.charCodeAt(0));
  });

  it('names every code it exports once', () => {
    expect(Object.keys(codes)).toHaveLength(14);
    expect(new Set(Object.values(codes)).size).toBe(14);
  });
});
