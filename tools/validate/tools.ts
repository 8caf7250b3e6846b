import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Output of a finished command. */
export interface ToolResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a binary (`promtool`, `amtool`) to completion. Injected, so the validation runs the same
 * from jest (tools/harness/prom-tools.ts) and from `make validate`.
 */
export type ToolRunner = (name: string, args: readonly string[], options?: { readonly cwd?: string }) => ToolResult;

/** The verdict of one check. */
export interface CheckResult {
  /** What was checked, e.g. `promtool test rules`. */
  readonly check: string;
  readonly ok: boolean;
  /** Tool output or the list of problems; empty when there is nothing to say. */
  readonly detail: string;
}

/** A check from a tool run: ok on exit status 0. */
export function toolCheck(check: string, result: ToolResult): CheckResult {
  return { check, ok: result.status === 0, detail: `${result.stdout}${result.stderr}`.trim() };
}

/** A check from a list of problems: ok when empty. */
export function problemsCheck(check: string, problems: readonly string[]): CheckResult {
  return { check, ok: problems.length === 0, detail: problems.join('\n') };
}

/** A scratch folder with `files` written into it; `dispose` removes it. */
export interface Workspace {
  readonly dir: string;
  write(name: string, text: string): string;
  dispose(): void;
}

/** Creates a scratch folder under the system temp dir. */
export function workspace(prefix = 'svc-ai-search-validate-'): Workspace {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    write(name, text) {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
