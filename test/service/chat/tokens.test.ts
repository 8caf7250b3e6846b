import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import {
  AnswerText,
  ESTIMATE_SAMPLE_CHARS,
  estimatedUsage,
  promptTokens,
  reportedUsage,
  textTokens,
} from '../../../service/chat/tokens';
import { MAX_HISTORY } from '../../../service/routes/chat';
import { repeatTo } from '../../helpers/hostile-text';
import { cpuMs } from '../../helpers/cpu-time';

const ROOT = join(__dirname, '..', '..', '..');

describe('textTokens', () => {
  it('counts ordinary text exactly as one call of the tokenizer does', () => {
    for (const f of ['README.md', 'BENCHMARKS.md', 'docs/api.md', 'docs/stack.md']) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      expect({ f, tokens: textTokens(text) }).toEqual({
        f,
        tokens: countTokens(text, { disallowedSpecial: new Set() }),
      });
    }
    expect(textTokens('')).toBe(0);
  });

  it('counts special tokens as text instead of throwing', () => {
    expect(textTokens('a <|endoftext|> b <|im_start|>')).toBeGreaterThan(4);
  });

  // 20 history turns of 8,000 characters: up to a second each shape before (one pre-token each).
  it.each([
    ['letters', 'a'],
    ['spaces', ' '],
    ['no-break spaces', '\u00a0'],
    ['CJK', '漢'],
    ['emoji', '😀'],
    ['punctuation', '!'],
  ])(
    'counts a chat of %s (20 history turns and a question of 8,000 characters) in well under a second',
    (_name, unit) => {
      const spent = cpuMs(() => {
        promptTokens(
          Array.from({ length: MAX_HISTORY + 1 }, (_, i) => ({
            role: 'user' as const,
            content: repeatTo(unit, 8000) + i,
          })),
        );
      });
      expect(spent).toBeLessThan(1000);
    },
  );
});

describe('AnswerText', () => {
  it('counts an answer up to the sample exactly, a longer one from the sample, keeping only the sample', () => {
    const short = new AnswerText();
    for (const w of ['Storage ', 'is where ', 'clusters hurt [1].']) short.add(w);
    expect(short.chars).toBe('Storage is where clusters hurt [1].'.length);
    expect(short.tokens()).toBe(textTokens('Storage is where clusters hurt [1].'));
    const long = new AnswerText();
    const piece = 'lorem ipsum dolor sit amet '.repeat(40_000);
    for (let i = 0; i < 30; i++) long.add(piece);
    expect(long.chars).toBe(30 * piece.length);
    const perChar = textTokens(piece.slice(0, ESTIMATE_SAMPLE_CHARS)) / ESTIMATE_SAMPLE_CHARS;
    expect(long.tokens()).toBe(Math.ceil(perChar * 30 * piece.length));
  });

  it('estimates a usage record from the prompt and the answer', () => {
    const a = new AnswerText();
    a.add('hi');
    expect(estimatedUsage([{ role: 'user', content: 'hello world' }], a)).toEqual({
      prompt_tokens: 9,
      completion_tokens: 1,
      total_tokens: 10,
    });
  });
});

describe('reportedUsage', () => {
  it('takes whole counts from 0, filling in or keeping a total at least the sum', () => {
    expect(reportedUsage({ prompt_tokens: 0, completion_tokens: 0 })).toEqual({
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    });
    expect(reportedUsage({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 9 })).toEqual({
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 9 },
    });
    expect(reportedUsage(null)).toEqual({});
    expect(reportedUsage(undefined)).toEqual({});
  });

  it.each([
    [{ prompt_tokens: -5000, completion_tokens: 3, total_tokens: -4997 }, /prompt_tokens is -5000/],
    [{ prompt_tokens: 2, completion_tokens: 0.5 }, /completion_tokens is 0.5/],
    [{ prompt_tokens: '2', completion_tokens: 1 }, /prompt_tokens is "2"/],
    [{ completion_tokens: 1 }, /prompt_tokens is absent/],
    [{ prompt_tokens: 1e300, completion_tokens: 1 }, /prompt_tokens/],
    [{ prompt_tokens: 2, completion_tokens: 1, total_tokens: 2 }, /total_tokens is 2/],
    [{ prompt_tokens: 2, completion_tokens: 1, total_tokens: -1 }, /total_tokens is -1/],
    [42, /not an object/],
  ])('refuses %j whole, saying why', (raw, why) => {
    const r = reportedUsage(raw);
    expect(r.usage).toBeUndefined();
    expect(r.problem).toMatch(why);
  });
});
