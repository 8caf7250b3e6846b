import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolResult, ToolRunner } from '../../tools/validate/tools';
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
  if (name !== 'promtool' || args[0] !== 'test' || args[1] !== 'rules' || !options.cwd) return runTool(name, args, { cwd: options.cwd });
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

const relativePaths = (r: ToolResult, dir: string): ToolResult => ({ status: r.status, stdout: r.stdout.split(dir).join(FOLDER), stderr: r.stderr.split(dir).join(FOLDER) });
const restorePaths = (r: ToolResult, dir: string): ToolResult => ({ status: r.status, stdout: r.stdout.split(FOLDER).join(dir), stderr: r.stderr.split(FOLDER).join(dir) });

/** Fails fast, with the install hint, when promtool or amtool is missing. */
export function requirePromTools(): void {
  requireBinary('promtool');
  requireBinary('amtool');
}
