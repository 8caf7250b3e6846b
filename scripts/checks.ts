import { ESLint } from 'eslint';
import ts from 'typescript';
import pkg from '../package.json';

/**
 * `make test`'s type check and lint (`npm run typecheck`, then `eslint .`) in one process, over one
 * TypeScript program per project: `tsc` builds and checks a program, and ESLint's typed rules
 * (no-floating-promises, no-misused-promises) built a second one of the same files through
 * typescript-eslint's project service and asked its checker again for the types `tsc` had just
 * worked out. Here ESLint is handed the programs the check made (typescript-eslint's `programs`
 * option), so each file is parsed and bound once and each type inferred once. The diagnostics are
 * `tsc --noEmit`'s and the lint findings `eslint .`'s, printed as they print them; either fails
 * the command. `npm run typecheck` and `npm run lint` stay the commands to run each alone.
 */

/** The projects `npm run typecheck` checks (each `tsc -p <project>` of that script), in its order. */
const TYPECHECKED = [...pkg.scripts.typecheck.matchAll(/\btsc -p (\S+)/g)].map((m) => m[1]);
/** Projects of linted files that are not type-checked here (the example consumer compiles against the built package). */
const LINTED_ONLY = ['examples/consumer/tsconfig.json'];

function program(configPath: string): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(configPath, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (!config) throw new Error(`${configPath}: not read`);
  return ts.createProgram({
    rootNames: config.fileNames,
    options: config.options,
    projectReferences: config.projectReferences,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config),
  });
}

/** `tsc -p <project> --noEmit`'s diagnostics of each project, printed as tsc prints them; the number of errors. */
function typecheck(programs: readonly ts.Program[]): number {
  const host: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: ts.sys.getCurrentDirectory,
    getNewLine: () => ts.sys.newLine,
  };
  let errors = 0;
  for (const p of programs) {
    const diagnostics = ts.sortAndDeduplicateDiagnostics(ts.getPreEmitDiagnostics(p));
    if (!diagnostics.length) continue;
    errors += diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error).length;
    const format = ts.sys.writeOutputIsTTY?.() ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
    process.stdout.write(format(diagnostics, host));
  }
  return errors;
}

async function main(): Promise<void> {
  if (!TYPECHECKED.length) throw new Error(`no "tsc -p <project>" in package.json's typecheck script`);
  const checked = TYPECHECKED.map(program);
  const typeErrors = typecheck(checked);
  const eslint = new ESLint({
    overrideConfig: {
      files: ['**/*.ts'],
      languageOptions: {
        parserOptions: { projectService: false, programs: [...checked, ...LINTED_ONLY.map(program)] },
      },
    },
  });
  const results = await eslint.lintFiles(['.']);
  const output = await (await eslint.loadFormatter('stylish')).format(results);
  if (output) process.stdout.write(output);
  const lintErrors = results.reduce((n, r) => n + r.errorCount, 0);
  process.stdout.write(`checks: ${typeErrors} type errors, ${lintErrors} lint errors\n`);
  if (typeErrors || lintErrors) process.exitCode = 1;
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 2;
});
