import type { Server } from 'node:http';
import type * as Supertest from 'supertest';
import type { Test } from 'supertest';
import type * as Contract from '../../tools/validate/openapi-answers';
import { contractProblemsSeen } from '../../tools/validate/openapi-answers-seen';

/**
 * Every supertest request to the service's app (createApp sets `openapi`) has its answer proven
 * against the OpenAPI document (tools/validate/openapi-answers.ts): an undocumented status, header form,
 * content type or body fails the request like a failed `.expect()`. Apps of other tests (bare
 * Express) and the answers of a stand-in features router (`X-Stand-In`) are left alone.
 * openapi-answers.ts (the OpenAPI document and ajv) is loaded at the first answer it checks, not in
 * every test file: most never send one.
 */
interface Patched {
  app?: Server | string;
  method: string;
  url: string;
  assert(err: unknown, res: unknown, fn: (err: unknown, res: unknown) => void): void;
}

function isServiceApp(app: Server | string | undefined): boolean {
  if (!app || typeof app === 'string') return false;
  const handler = app.listeners('request')[0] as { get?: (k: string) => unknown } | undefined;
  return typeof handler?.get === 'function' && handler.get('openapi') === '/api/openapi.json';
}

/** Proves the answers of `Test` (supertest's request class) as described above. */
function patch(test: typeof Test): void {
  const proto = test.prototype as unknown as Patched;
  const assert = proto.assert;
  proto.assert = function (this: Patched, err, res, fn) {
    const r = res as { status: number; headers: Record<string, string>; text?: string } | undefined;
    // A stand-in router's answers (X-Stand-In) are the test's, not the service's.
    if (r && isServiceApp(this.app) && r.headers['x-stand-in'] === undefined) {
      // Loaded here, at the first answer to check (see above); a synchronous require keeps assert synchronous.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { contractProblem } = require('../../tools/validate/openapi-answers') as typeof Contract;
      const problem = contractProblem({
        method: this.method,
        path: new URL(this.url).pathname,
        status: r.status,
        headers: r.headers,
        text: r.text ?? '',
      });
      if (problem) return fn.call(this, new Error(`contract: ${problem}`), res);
    }
    return assert.call(this, err, res, fn);
  };
}

// Patched when a suite first requires supertest (jest's module factory), not in every suite: most
// never send a request through it, and loading it was ~85 ms of each of the ~130 suites.
jest.mock('supertest', () => {
  const actual = jest.requireActual<typeof Supertest>('supertest');
  patch(actual.Test);
  return actual;
});

// Answers of a real service process (tools/harness/service-process.ts) are proven as they arrive; a
// test file that saw one the document does not allow fails here.
afterAll(() => {
  const seen = contractProblemsSeen.splice(0);
  if (seen.length)
    throw new Error(
      `answers outside the OpenAPI document (${seen.length}):\n${[...new Set(seen)].slice(0, 20).join('\n')}`,
    );
});
