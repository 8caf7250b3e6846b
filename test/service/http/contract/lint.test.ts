import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../../../service/http/contract/openapi';

const ROOT = join(__dirname, '..', '..', '..', '..');

/**
 * Lints the generated document with Redocly CLI (its `recommended` rules, redocly.yaml) and
 * requires zero errors. Offline: no telemetry, no update check, no remote $refs.
 */
describe('the OpenAPI document under a real linter', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes `redocly lint` with zero errors', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(openApiDocument(), null, 2));
    const cli = require.resolve('@redocly/cli/bin/cli.js');
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [cli, 'lint', file, '--format=json', '--config', join(ROOT, 'redocly.yaml')],
        { cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1' }, maxBuffer: 16 << 20 },
        // Exit code 1 when there are errors: the JSON report says which.
        (err, stdout) => (stdout ? resolve(stdout) : reject(err ?? new Error('redocly printed nothing'))),
      );
    });
    const report = JSON.parse(out.slice(out.indexOf('{'))) as { totals: { errors: number }; problems: Array<{ severity: string; ruleId: string; message: string }> };
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 60_000);

  it('is a valid OpenAPI 3.1 document under a validating parser (the specification\'s own JSON Schema)', async () => {
    const file = join(dir, 'openapi-validate.json');
    writeFileSync(file, JSON.stringify(openApiDocument()));
    // An ES module: run where `import` loads it, as the linter runs.
    const script = `import { Validator } from '@seriousme/openapi-schema-validator';
      const v = new Validator();
      const r = await v.validate(${JSON.stringify(file)});
      console.log(JSON.stringify({ ...r, version: v.version }));`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
    );
    expect(JSON.parse(out)).toEqual({ valid: true, version: '3.1' });
  }, 30_000);

  it('holds only valid JSON Schema 2020-12 (every component compiles under ajv)', () => {
    const doc = openApiDocument() as { components: { schemas: Record<string, object> } };
    // With the formats the document names (date-time, …) known, not ignored with a warning.
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi.json', components: doc.components });
    for (const name of Object.keys(doc.components.schemas)) expect(() => ajv.getSchema(`openapi.json#/components/schemas/${name}`)).not.toThrow();
  });
});
