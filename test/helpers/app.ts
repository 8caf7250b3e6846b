import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import { parseSettings, type Settings, type SettingsInput } from '../../configs';
import { createApp } from '../../service/app';
import { ManualClock } from './manual-clock';
import { closeDeps, createDeps, startDeps, type AppDeps, type DepsOverrides } from '../../service/deps';

/** An app built for a test, with its deps, settings and a manual clock. */
export interface TestApp {
  readonly app: Express;
  readonly deps: AppDeps;
  readonly settings: Settings;
  readonly clock: ManualClock;
  /** Closes the deps, then removes the data folder when this helper made it. */
  close(): Promise<void>;
  /**
   * Removes the data folder when this helper made it, for a test whose deps were closed another
   * way (a `listen(...)` server's `shutdown()` closes them).
   */
  removeDataDir(): void;
}

/**
 * Redis command timeout of test apps unless the test sets one: far above a loaded machine's
 * stalls (the default 250 ms is for production), so only a real outage fails a command.
 */
const TEST_COMMAND_TIMEOUT_MS = 2000;

/**
 * Builds an app from typed settings (defaults + `input`), a fresh registry, a silent logger and a
 * manual clock; starts its deps (so it is ready) unless `start: false`.
 */
export async function buildTestApp(
  input: SettingsInput = {},
  overrides: DepsOverrides & { start?: boolean } = {},
): Promise<TestApp> {
  // Each app gets its own data folder unless the test names one.
  const dataDir = input.service?.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-'));
  const settings = parseSettings({
    ...input,
    // Demo content (on in development) would fill every test's in-memory copy; a test opts in.
    service: { demoContent: false, ...input.service, dataDir },
    kvstore: { commandTimeoutMs: TEST_COMMAND_TIMEOUT_MS, ...input.kvstore },
  });
  const clock = (overrides.clock as ManualClock | undefined) ?? new ManualClock();
  const deps = createDeps(settings, { ...overrides, clock });
  if (overrides.start ?? true) await startDeps(deps);
  const removeDataDir = () => {
    if (!input.service?.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const close = async () => {
    await closeDeps(deps);
    removeDataDir();
  };
  return { app: createApp(deps), deps, settings, clock, close, removeDataDir };
}
