import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RULE_TESTS_FILE, RULES_FILE } from '../validate/promtool';
import { workspace, type ToolResult, type ToolRunner } from '../validate/tools';
import { requireBinary, runTool } from './binary';

/**
 * The real `promtool` and `amtool` (Debian packages, installed by `make test`) behind the
 * `ToolRunner` the validation module takes; `make validate` uses the same runner.
 *
 * `promtool test rules` (seconds per run: every test evaluates every rule minute by minute over
 * days of samples) is run once per distinct input in a process: its verdict depends only on the
 * files of its folder (the test file and the rule files it names, evaluated from time 0), so a
 * second run on byte-identical files (another test of the same file re-validating the default
 * stack) reuses the first run's result. Every other tool run, and every first run, is real.
 */
export const promTools: ToolRunner = (name, args, options = {}) => {
  if (name !== 'promtool' || args[0] !== 'test' || args[1] !== 'rules' || !options.cwd)
    return runTool(name, args, { cwd: options.cwd });
  const key = inputKey(name, args, options.cwd);
  const seen = testRulesRuns.get(key);
  if (seen) return restorePaths(seen, options.cwd);
  const result = runTool(name, args, { cwd: options.cwd });
  testRulesRuns.set(key, relativePaths(result, options.cwd));
  return result;
};

/** Results of `promtool test rules` by input (folder contents and arguments), folder paths replaced by FOLDER. */
const testRulesRuns = new Map<string, ToolResult>();
const FOLDER = '\u0000folder\u0000';

/** A digest of the arguments (folder-relative) and of every file in the folder, by name. */
function inputKey(name: string, args: readonly string[], dir: string): string {
  const hash = createHash('sha256').update(name);
  for (const a of args) hash.update(`\u0000arg ${a.split(dir).join(FOLDER)}`);
  for (const f of readdirSync(dir).sort()) {
    const path = join(dir, f);
    if (statSync(path).isFile()) hash.update(`\u0000file ${f}\u0000`).update(readFileSync(path));
  }
  return hash.digest('hex');
}

const relativePaths = (r: ToolResult, dir: string): ToolResult => ({
  status: r.status,
  stdout: r.stdout.split(dir).join(FOLDER),
  stderr: r.stderr.split(dir).join(FOLDER),
});
const restorePaths = (r: ToolResult, dir: string): ToolResult => ({
  status: r.status,
  stdout: r.stdout.split(FOLDER).join(dir),
  stderr: r.stderr.split(FOLDER).join(dir),
});

/**
 * Runs `promtool test rules` on each pair of rule file and test document ahead, `parallel` at a
 * time, in folders laid out as `testRules` lays them out; the `testRules(promTools, …)` calls of
 * the tests that follow, on the same texts, reuse these results. A test file judging many rule
 * sets so uses both cores instead of one. A pair whose layout differs just runs again then.
 */
export async function testRulesAhead(
  pairs: ReadonlyArray<{ readonly rulesText: string; readonly testsText: string }>,
  parallel = 2,
): Promise<void> {
  const queue = [...pairs];
  const worker = async () => {
    for (let pair = queue.shift(); pair; pair = queue.shift()) {
      const ws = workspace();
      try {
        ws.write(RULES_FILE, pair.rulesText);
        const args = ['test', 'rules', ws.write(RULE_TESTS_FILE, pair.testsText)];
        const key = inputKey('promtool', args, ws.dir);
        if (!testRulesRuns.has(key))
          testRulesRuns.set(key, relativePaths(await runAsync(requireBinary('promtool'), args, ws.dir), ws.dir));
      } finally {
        ws.dispose();
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

function runAsync(binary: string, args: readonly string[], cwd: string): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Fails fast, with the install hint, when promtool or amtool is missing. */
export function requirePromTools(): void {
  requireBinary('promtool');
  requireBinary('amtool');
}
