import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { promptTokens, textTokens } from '../../../service/chat/tokens';
import { MAX_HISTORY } from '../../../service/routes/chat';
import { repeatTo } from '../../helpers/hostile-text';
import { cpuMs } from '../../helpers/cpu-time';

const ROOT = join(__dirname, '..', '..', '..');

describe('textTokens', () => {
  it('counts ordinary text exactly as one call of the tokenizer does', () => {
    for (const f of ['README.md', 'BENCHMARKS.md', 'docs/api.md', 'docs/stack.md']) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      expect({ f, tokens: textTokens(text) }).toEqual({ f, tokens: countTokens(text, { disallowedSpecial: new Set() }) });
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
  ])('counts a chat of %s (20 history turns and a question of 8,000 characters) in well under a second', (_name, unit) => {
    const spent = cpuMs(() => {
      promptTokens(Array.from({ length: MAX_HISTORY + 1 }, (_, i) => ({ role: 'user' as const, content: repeatTo(unit, 8000) + i })));
    });
    expect(spent).toBeLessThan(1000);
  });
});
