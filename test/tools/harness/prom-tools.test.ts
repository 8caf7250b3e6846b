import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workspace, type ToolRunner } from '../../../tools/validate/tools';
import type * as PromToolsModule from '../../../tools/harness/prom-tools';

/** Another process's `promTools`: a fresh copy of the module, with nothing kept in memory yet. */
function otherProcess(): ToolRunner {
  let runner: ToolRunner | undefined;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    runner = (require('../../../tools/harness/prom-tools') as typeof PromToolsModule).promTools;
  });
  return runner as ToolRunner;
}

const ALERTMANAGER_YML = 'route:\n  receiver: default\nreceivers:\n  - name: default\n';
const RULES_YML = 'groups:\n  - name: g\n    rules:\n      - record: job:up:sum\n        expr: sum(up)\n';
const TESTS_YML = [
  'rule_files:',
  '  - rules.yml',
  'tests:',
  '  - interval: 1m',
  '    input_series:',
  '      - series: \'up{job="a"}\'',
  "        values: '1x5'",
  '    promql_expr_test:',
  '      - expr: job:up:sum',
  '        eval_time: 2m',
  '        exp_samples:',
  '          - labels: job:up:sum',
  '            value: 1',
  '',
].join('\n');

describe('promTools: results shared by the processes of one test run (PROM_TOOLS_RESULTS_DIR)', () => {
  const saved = process.env.PROM_TOOLS_RESULTS_DIR;
  let shared: string;
  const workspaces: Array<{ dir: string; dispose(): void }> = [];
  const checkConfig = (runner: ToolRunner) => {
    const ws = workspace();
    workspaces.push(ws);
    return runner('amtool', ['check-config', ws.write('alertmanager.yml', ALERTMANAGER_YML)]);
  };
  const kept = () => readdirSync(shared).filter((f) => f.endsWith('.json'));

  beforeEach(() => {
    shared = mkdtempSync(join(tmpdir(), 'svc-ai-search-prom-tools-test-'));
    process.env.PROM_TOOLS_RESULTS_DIR = shared;
  });
  afterEach(() => {
    for (const ws of workspaces.splice(0)) ws.dispose();
    rmSync(shared, { recursive: true, force: true });
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.PROM_TOOLS_RESULTS_DIR;
    else process.env.PROM_TOOLS_RESULTS_DIR = saved;
  });

  it('a run one process made is read by the next, in a folder of its own, instead of running the tool again', () => {
    const first = checkConfig(otherProcess());
    expect(first.status).toBe(0);
    expect(kept()).toHaveLength(1);
    // Marked, so that a second real run would show.
    const file = join(shared, kept()[0]);
    const result = JSON.parse(readFileSync(file, 'utf8')) as { stdout: string };
    writeFileSync(file, JSON.stringify({ ...result, stdout: 'kept by the first process' }));
    expect(checkConfig(otherProcess())).toEqual({ status: 0, stdout: 'kept by the first process', stderr: '' });
  });

  it('waits for a run another live process has claimed, and takes over a claim whose process died', () => {
    checkConfig(otherProcess());
    const [file] = kept();
    const key = file.replace(/\.json$/, '');
    const result = readFileSync(join(shared, file), 'utf8');
    rmSync(join(shared, file));
    // A live claimant that keeps its result half a second later (a marked one, to tell it apart).
    const marked = JSON.stringify({ ...JSON.parse(result), stdout: 'kept by the claimant' });
    writeFileSync(join(shared, 'marked.tmp'), marked);
    const claimant = spawn('sh', ['-c', `sleep 0.5; mv '${join(shared, 'marked.tmp')}' '${join(shared, file)}'`]);
    mkdirSync(join(shared, `${key}.claim`), { recursive: true }); // the first run's claim, now another's
    writeFileSync(join(shared, `${key}.claim`, 'pid'), String(claimant.pid));
    expect(checkConfig(otherProcess()).stdout).toBe('kept by the claimant');

    // A claim whose process is gone: the run is made for real.
    rmSync(join(shared, file));
    writeFileSync(join(shared, `${key}.claim`, 'pid'), String(spawnSync('true').pid));
    expect(checkConfig(otherProcess()).stdout).not.toBe('kept by the claimant');
    expect(kept()).toEqual([file]);
  });

  it('keys promtool test rules by the test file and the rule files it names, not the other files beside them', () => {
    const testRules = (runner: ToolRunner, extra?: string) => {
      const ws = workspace();
      workspaces.push(ws);
      ws.write('rules.yml', RULES_YML);
      if (extra) ws.write('prometheus.yml', extra);
      return runner('promtool', ['test', 'rules', ws.write('rules.test.yml', TESTS_YML)], { cwd: ws.dir });
    };
    expect(testRules(otherProcess()).stdout).toContain('SUCCESS');
    expect(testRules(otherProcess(), 'global: {}\n').stdout).toContain('SUCCESS');
    expect(kept()).toHaveLength(1);
    // A changed rule file is another input.
    const ws = workspace();
    workspaces.push(ws);
    ws.write('rules.yml', RULES_YML.replace('sum(up)', 'count(up)'));
    const path = ws.write('rules.test.yml', TESTS_YML);
    expect(otherProcess()('promtool', ['test', 'rules', path], { cwd: ws.dir }).status).toBe(0);
    expect(kept()).toHaveLength(2);
  });
});
