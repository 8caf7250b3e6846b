import { loadSettings, redactSettings, SettingsError } from '../configs';
import { createApp } from './app';
import { loadTokenizer } from './chat/tokens';
import { createDeps, startDeps } from './deps';
import { createLogger } from './lib/logger';
import { collectStartupGarbage } from './lib/startup-heap';
import { installProcessGuard } from './process-guard';
import { listen } from './server';

/** Exits 2 with the message of a `SettingsError` (no stack trace); rethrows anything else. */
function refuseBadSettings(e: unknown): never {
  if (e instanceof SettingsError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
  throw e;
}

/** Starts the service: settings → logger → deps → app → listen; SIGTERM/SIGINT drain and exit 0. */
async function main(): Promise<void> {
  let settings;
  try {
    settings = loadSettings(process.env);
  } catch (e) {
    refuseBadSettings(e);
  }
  const logger = createLogger(settings.service.logLevel);
  installProcessGuard(logger);
  logger.info({ settings: redactSettings(settings) }, 'settings loaded');
  // Before listening: the tokenizer's table is half a second of one step, which no request should wait for.
  loadTokenizer();
  collectStartupGarbage();
  let deps;
  try {
    // Reads the synonyms file (SEARCH_SYNONYMS_FILE): a bad one is a bad setting.
    deps = createDeps(settings, { logger, processMetrics: true });
  } catch (e) {
    refuseBadSettings(e);
  }
  const app = createApp(deps);
  const running = await listen(app, deps, settings.service.port);
  logger.info({ port: running.port, environment: settings.service.environment }, 'listening');
  // The start-up build's garbage collected before readiness, not at the first queries.
  await startDeps(deps, { settle: collectStartupGarbage });
  logger.info('ready');
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    running.shutdown().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
