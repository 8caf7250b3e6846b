import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../../../service/http/contract/openapi';

const ROOT = join(__dirname, '..', '..', '..', '..');

/** Runs node with `args`; resolves with what it printed (a linter exits 1 on errors and prints why). */
function node(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    execFile(process.execPath, args, { cwd: ROOT, env, maxBuffer: 16 << 20 }, (err, stdout) =>
      stdout ? resolve(stdout) : reject(err ?? new Error('printed nothing')),
    );
  });
}

/**
 * Lints the generated document with Redocly CLI (its `recommended` rules, redocly.yaml) and
 * requires zero errors, and validates it with a validating parser against the OpenAPI 3.1
 * specification's own JSON Schema. Offline: no telemetry, no update check, no remote $refs. Both
 * run at once, in child processes started before the tests that await them.
 */
describe('the OpenAPI document under a real linter', () => {
  let dir: string;
  let lint: Promise<string>;
  let validation: Promise<string>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(openApiDocument(), null, 2));
    const cli = require.resolve('@redocly/cli/bin/cli.js');
    lint = node([cli, 'lint', file, '--format=json', '--config', join(ROOT, 'redocly.yaml')], {
      ...process.env,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      NO_UPDATE_NOTIFIER: '1',
    });
    // An ES module: run where `import` loads it.
    validation = node([
      '--input-type=module',
      '-e',
      `import { Validator } from '@seriousme/openapi-schema-validator';
       const v = new Validator();
       const r = await v.validate(${JSON.stringify(file)});
       console.log(JSON.stringify({ ...r, version: v.version }));`,
    ]);
    // Awaited by their tests; not unhandled meanwhile.
    lint.catch(() => undefined);
    validation.catch(() => undefined);
  });
  afterAll(async () => {
    await Promise.allSettled([lint, validation]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes `redocly lint` with zero errors', async () => {
    const out = await lint;
    const report = JSON.parse(out.slice(out.indexOf('{'))) as {
      totals: { errors: number };
      problems: Array<{ severity: string; ruleId: string; message: string }>;
    };
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 60_000);

  it("is a valid OpenAPI 3.1 document under a validating parser (the specification's own JSON Schema)", async () => {
    expect(JSON.parse(await validation)).toEqual({ valid: true, version: '3.1' });
  }, 60_000);

  it('holds only valid JSON Schema 2020-12 (every component compiles under ajv)', () => {
    const doc = openApiDocument() as { components: { schemas: Record<string, object> } };
    // With the formats the document names (date-time, …) known, not ignored with a warning.
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi.json', components: doc.components });
    for (const name of Object.keys(doc.components.schemas))
      expect(() => ajv.getSchema(`openapi.json#/components/schemas/${name}`)).not.toThrow();
  });
});
