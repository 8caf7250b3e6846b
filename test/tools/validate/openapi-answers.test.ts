import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openApiDocument } from '../../../service/http/contract/openapi';
import type * as Answers from '../../../tools/validate/openapi-answers';
import { SHARED_DOCUMENT_ENV } from '../../../tools/validate/openapi-answers';

/** A fresh instance of the checker (its document is read once per instance, as in a new process). */
function freshChecker(): typeof Answers {
  let m: typeof Answers | undefined;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    m = require('../../../tools/validate/openapi-answers') as typeof Answers;
  });
  return m!;
}

const health = { method: 'GET', path: '/health', status: 200, headers: { 'content-type': 'application/json' } };

describe("the answer checker's document, shared by the processes of a run", () => {
  const saved = process.env[SHARED_DOCUMENT_ENV];
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'openapi-answers-'));
    process.env[SHARED_DOCUMENT_ENV] = join(dir, 'openapi.json');
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    if (saved === undefined) delete process.env[SHARED_DOCUMENT_ENV];
    else process.env[SHARED_DOCUMENT_ENV] = saved;
  });

  it('the first checker of the run writes the generated document; the next ones read that file', () => {
    const file = join(dir, 'openapi.json');
    expect(freshChecker().contractProblem({ ...health, text: '{}' })).toMatch(/does not match the document/);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    // What the next checker proves answers against is the file: one without /health finds no operation.
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { paths: Record<string, unknown> };
    delete doc.paths['/health'];
    writeFileSync(file, JSON.stringify(doc));
    expect(freshChecker().contractProblem({ ...health, text: '{}' })).toMatch(/no documented operation/);
  });
});
