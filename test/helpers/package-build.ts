import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { processIsAlive } from '../../service/content/file-store/dir-lock';

const ROOT = resolve(__dirname, '../..');
const LOCK = join(ROOT, '.tmp', 'package-build.lock');

/** Takes the lock (a folder: mkdir is atomic), waiting for its holder; takes over from a holder that died. */
function lock(): void {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    } catch {
      // Between the holder's mkdir and its pid file: wait.
    }
    if (Number.isInteger(holder) && holder > 0 && !processIsAlive(holder))
      rmSync(LOCK, { recursive: true, force: true });
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
}

/**
 * The environment variable naming the file that marks `build/` as built by this jest run
 * (test/helpers/run-folders.js makes its folder at the run's start and removes it at the end).
 */
const BUILT_MARK_ENV = 'PACKAGE_BUILT_MARK';

/**
 * Builds the package into `build/` (`tsc -p tsconfig.build.json`, incremental: a build with
 * nothing changed is a quick check) and runs `use` on it, one process at a time. Two suites
 * (test/package.test.ts, test/app/example-consumer.test.ts) build and pack the same folder; in
 * jest workers side by side, one tsc would rewrite the files the other's `npm pack` reads.
 * The build info lives in `build/` itself, so a deleted `build/` is built again whole.
 *
 * In a jest run the first of them marks the build done (`BUILT_MARK_ENV`), and the second uses
 * that build as it is: the sources do not change during a run, and tsc's incremental check that
 * found nothing to do still cost 6.5 s of CPU (it parses and binds every file again).
 */
export function withBuiltPackage<T>(use: () => T): T {
  lock();
  try {
    const mark = process.env[BUILT_MARK_ENV];
    if (!mark || !existsSync(mark)) {
      execFileSync(
        join(ROOT, 'node_modules/.bin/tsc'),
        ['-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', 'build/tsconfig.build.tsbuildinfo'],
        { cwd: ROOT, stdio: 'ignore' },
      );
      if (mark) writeFileSync(mark, '');
    }
    return use();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
