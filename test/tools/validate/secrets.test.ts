import { secretLeaks } from '../../../tools/validate';

describe('secretLeaks', () => {
  const files = new Map([
    ['a.yaml', 'password: hunter2-long-enough\n'],
    ['b.yaml', 'url: redis://kvstore:6379\n'],
  ]);

  it('names the variable and the file, never the value', () => {
    expect(secretLeaks(files, { SMTP_PASSWORD: 'hunter2-long-enough' })).toEqual([
      'the value of SMTP_PASSWORD appears in a.yaml',
    ]);
  });

  it('finds the password inside a secret URL', () => {
    expect(secretLeaks(files, { KVSTORE_URL: 'redis://:hunter2-long-enough@elsewhere:6379' })).toEqual([
      'the value of KVSTORE_URL appears in a.yaml',
    ]);
  });

  it('ignores unset, non-secret and too short values', () => {
    expect(secretLeaks(files, { SMTP_HOST: 'hunter2-long-enough', API_TOKEN: '', AI_API_KEY: 'yaml' })).toEqual([]);
  });
});
