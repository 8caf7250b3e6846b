import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');

/** The request-handling sources outside the contract: routes, http helpers, the app. */
function handlerSources(): { file: string; lines: string[] }[] {
  const files = [
    ...readdirSync(join(ROOT, 'service/routes')).map((f) => `service/routes/${f}`),
    ...readdirSync(join(ROOT, 'service/http'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `service/http/${f}`),
    'service/app.ts',
  ];
  return files.map((file) => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').split('\n') }));
}

/** Lines matching `pattern`, as `file: line`. */
function where(pattern: RegExp): string[] {
  return handlerSources().flatMap(({ file, lines }) =>
    lines.filter((l) => pattern.test(l)).map((l) => `${file}: ${l.trim()}`),
  );
}

// docs/architecture.md "Validation": request input goes through the contract's zod schemas only.
describe('one way to validate request input', () => {
  it('query strings and path parameters are read only as the argument of a schema', () => {
    expect(
      where(/req\.(query|params)\b/).filter((l) => !/(validate\([^,]+, |parseSearch\()req\.(query|params)[,)]/.test(l)),
    ).toEqual([]);
  });

  it('no hand-written number parsing of request input; Content-Length (checked by Node) is the one number read', () => {
    expect(
      where(/parseInt|parseFloat|Number\(/).filter((l) => !l.includes("Number(req.get('content-length')")),
    ).toEqual([]);
  });
});
