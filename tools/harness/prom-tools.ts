import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { load } from 'js-yaml';
import { RULE_TESTS_FILE, RULES_FILE } from '../validate/promtool';
import { workspace, type ToolResult, type ToolRunner } from '../validate/tools';
import { requireBinary, runTool } from './binary';
import { processIsAlive } from '../../service/content/file-store/dir-lock';

/**
 * The real `promtool` and `amtool` (Debian packages, installed by `make test`) behind the
 * `ToolRunner` the validation module takes; `make validate` uses the same runner.
 *
 * These runs are made once per distinct input in a process, and a second run on byte-identical
 * input (another test of the same file re-validating the default stack, or a variant whose change
 * leaves that file as it was) reuses the first run's result:
 * - `promtool test rules` (seconds per run: every test evaluates every rule minute by minute over
 *   days of samples): its verdict depends only on the files of its folder (the test file and the
 *   rule files it names, evaluated from time 0);
 * - `amtool config routes test --config.file=<file> labels…` (one process per route case, 41
 *   cases per stack: 380 runs in test/tools/validate/validate-stack.test.ts, 119 of them
 *   distinct): Alertmanager's router resolves the labels against that one file, which amtool
 *   parses and reads nothing else for;
 * - `promtool check rules <file>` and `promtool check config <file>` run in the file's folder
 *   (the config's rule files are retargeted into it and nothing else it names is a file), and
 *   `amtool check-config <file>` (it parses the one file; the secret `*_file`s are read at send
 *   time): a quarter of a second each, 15 of the 28 runs of validate-stack.test.ts distinct.
 * Every other tool run, and every first run, is real.
 *
 * With `PROM_TOOLS_RESULTS_DIR` set (a jest run sets it to a folder of its own,
 * test/helpers/run-folders.js, and removes the folder at its end), the processes of that
 * run share these results too: the test files and the `make validate` commands they start judge
 * the same default and operator stacks, each paying seconds of promtool for the same verdict. A
 * run on input another process is running waits for its result instead of running beside it.
 */
export const promTools: ToolRunner = (name, args, options = {}) => {
  const folder = reusableInputFolder(name, args, options.cwd);
  if (!folder) return runTool(name, args, { cwd: options.cwd });
  const key = inputKey(name, args, folder.dir, folder.files);
  const seen = reusableRuns.get(key) ?? sharedResult(key);
  if (seen) {
    reusableRuns.set(key, seen);
    return restorePaths(seen, folder.dir);
  }
  const result = claimed(key, () => runTool(name, args, { cwd: options.cwd }));
  keep(key, relativePaths(result, folder.dir));
  return result;
};

/**
 * The folder a reusable run reads its input from, and which of its files (all when undefined);
 * undefined for a run that is always real.
 */
function reusableInputFolder(
  name: string,
  args: readonly string[],
  cwd: string | undefined,
): { dir: string; files?: readonly string[] } | undefined {
  if (name === 'promtool' && args[0] === 'test' && args[1] === 'rules' && cwd)
    return { dir: cwd, files: testInputs(args, cwd) };
  if (name === 'promtool' && args[0] === 'check' && ['rules', 'config'].includes(args[1]) && cwd) {
    // Only the form the validation module runs: flags, then one file of the folder.
    const files = args.slice(2).filter((a) => !a.startsWith('-'));
    return files.length === 1 && dirname(files[0]) === cwd ? { dir: cwd } : undefined;
  }
  if (name === 'amtool' && args[0] === 'check-config' && args.length === 2 && isAbsolute(args[1]))
    return { dir: dirname(args[1]), files: [basename(args[1])] };
  if (name === 'amtool' && args[0] === 'config' && args[1] === 'routes' && args[2] === 'test') {
    const configs = args.filter((a) => a.startsWith(AMTOOL_CONFIG_FLAG));
    if (configs.length !== 1) return undefined;
    const path = configs[0].slice(AMTOOL_CONFIG_FLAG.length);
    if (!isAbsolute(path)) return undefined;
    return { dir: dirname(path), files: [basename(path)] };
  }
  return undefined;
}
const AMTOOL_CONFIG_FLAG = '--config.file=';

/**
 * What `promtool test rules <file>` reads: the test file and the rule files it names (relative to
 * its folder; the other files there, such as prometheus.yml beside them in a validation
 * workspace, are not read). Undefined (every file of the folder) for any other form: several
 * test files, a glob or a path outside the folder among the rule files, a file that is no YAML.
 */
function testInputs(args: readonly string[], cwd: string): readonly string[] | undefined {
  const files = args.slice(2);
  if (files.length !== 1 || dirname(files[0]) !== cwd) return undefined;
  try {
    const doc = load(readFileSync(files[0], 'utf8')) as { rule_files?: unknown } | undefined;
    const ruleFiles = doc?.rule_files ?? [];
    if (!Array.isArray(ruleFiles) || !ruleFiles.every((f) => typeof f === 'string' && /^[\w.-]+$/.test(f)))
      return undefined;
    return [basename(files[0]), ...(ruleFiles as string[])];
  } catch {
    return undefined;
  }
}

/** Results of reusable runs by input (folder contents and arguments), folder paths replaced by FOLDER. */
const reusableRuns = new Map<string, ToolResult>();
const FOLDER = '\u0000folder\u0000';

/** Keeps a run's result in this process and, when the run shares them, for its other processes. */
function keep(key: string, result: ToolResult): void {
  reusableRuns.set(key, result);
  const dir = process.env[SHARED_RESULTS_ENV];
  if (!dir) return;
  // Written aside and renamed: a process reading it meanwhile sees all of it or nothing.
  const tmp = join(dir, `${key}.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify(result));
  renameSync(tmp, join(dir, `${key}.json`));
}

/** The environment variable naming the folder where the processes of one test run share results. */
export const SHARED_RESULTS_ENV = 'PROM_TOOLS_RESULTS_DIR';

/**
 * What the other processes of the run have for `key`: their result; 'wait' while another live
 * process has claimed the run and not finished it; undefined when the run is this process's to
 * make (it has claimed it now), or when nothing is shared.
 */
function sharedLook(key: string): ToolResult | undefined | 'wait' {
  const dir = process.env[SHARED_RESULTS_ENV];
  if (!dir) return undefined;
  try {
    return JSON.parse(readFileSync(join(dir, `${key}.json`), 'utf8')) as ToolResult;
  } catch {
    // not kept yet
  }
  const claim = join(dir, `${key}.claim`);
  try {
    mkdirSync(claim);
    writeFileSync(join(claim, 'pid'), String(process.pid));
    return undefined;
  } catch {
    // claimed by another process: wait while it is alive; a claimant that died leaves the run to us
  }
  try {
    const pid = Number(readFileSync(join(claim, 'pid'), 'utf8'));
    return pid && pid !== process.pid && processIsAlive(pid) ? 'wait' : undefined;
  } catch {
    // the claimant is between making its claim and naming itself, unless it died there
    return Date.now() - statSync(claim).mtimeMs < CLAIM_NAMING_MS ? 'wait' : undefined;
  }
}

/** `sharedLook`, waiting out another process's run (synchronously: promTools is, as `spawnSync` is). */
function sharedResult(key: string): ToolResult | undefined {
  for (let r = sharedLook(key); ; r = sharedLook(key)) {
    if (r !== 'wait') return r;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, WAIT_STEP_MS);
  }
}

/** `sharedResult` without blocking the event loop. */
async function sharedResultAsync(key: string): Promise<ToolResult | undefined> {
  for (let r = sharedLook(key); ; r = sharedLook(key)) {
    if (r !== 'wait') return r;
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
  }
}

/** `run()`, giving up this process's claim on `key` if it throws, so that no other process waits for it. */
function claimed<T>(key: string, run: () => T): T {
  const release = () => {
    const dir = process.env[SHARED_RESULTS_ENV];
    if (dir) rmSync(join(dir, `${key}.claim`), { recursive: true, force: true });
  };
  try {
    const r = run();
    if (r instanceof Promise) r.catch(release);
    return r;
  } catch (e) {
    release();
    throw e;
  }
}

/** A claim whose process has not named itself after this long was left by a process that died. */
const CLAIM_NAMING_MS = 10_000;

/** How often a process waiting for another's run looks for its result. */
const WAIT_STEP_MS = 100;

/** A digest of the arguments (folder-relative) and of the files of the folder (`files`, else every one), by name. */
function inputKey(name: string, args: readonly string[], dir: string, files?: readonly string[]): string {
  const hash = createHash('sha256').update(name);
  for (const a of args) hash.update(`\u0000arg ${a.split(dir).join(FOLDER)}`);
  for (const f of files ?? readdirSync(dir).sort()) {
    const path = join(dir, f);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) hash.update(`\u0000missing ${f}\u0000`);
    else if (stat.isFile()) hash.update(`\u0000file ${f}\u0000`).update(readFileSync(path));
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
        const key = inputKey('promtool', args, ws.dir, testInputs(args, ws.dir));
        if (reusableRuns.has(key)) continue;
        const shared = await sharedResultAsync(key);
        if (shared) reusableRuns.set(key, shared);
        else
          keep(key, relativePaths(await claimed(key, () => runAsync(requireBinary('promtool'), args, ws.dir)), ws.dir));
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
