import type { ToolRunner } from '../../tools/validate/tools';
import { requireBinary, runTool } from './binary';

/**
 * The real `promtool` and `amtool` (Debian packages, installed by `make test`) behind the
 * `ToolRunner` the validation module takes; `make validate` uses the same runner.
 */
export const promTools: ToolRunner = (name, args, options = {}) => runTool(name, args, { cwd: options.cwd });

/** Fails fast, with the install hint, when promtool or amtool is missing. */
export function requirePromTools(): void {
  requireBinary('promtool');
  requireBinary('amtool');
}
