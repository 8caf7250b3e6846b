/**
 * `make up`: the whole stack on this machine, without a cluster, for a person to look at. The
 * same composition as the e2e test (tools/harness/local-stack.ts): the service, `redis-server`,
 * and the Prometheus and Alertmanager configs of `npx cdk8s synth` running in the real
 * `prometheus` and `prometheus-alertmanager`, with a local webhook receiver that prints every
 * notification. Intervals are the generated ones (scrape 15s, BackendDown after 1m, …) unless
 * `--fast` is given (the e2e test's: 1s scrapes, rules fire after 2s).
 *
 * Ports: service 8080, Prometheus 9090, Alertmanager 9093, Redis 6379; each falls back to a free
 * port when taken. Settings come from the environment as for `make run` and `make synth`.
 * Ctrl-C (or SIGTERM) stops everything and removes the temporary files.
 */
import {
  INTERACTIVE_PORTS,
  LocalStack,
  RECEIVER_PATHS,
  summarizeDelivery,
  TEST_INTERVALS,
} from '../tools/harness/local-stack';
import { detectUiLinks } from './ui-links';

async function main(): Promise<void> {
  const args = new Set(process.argv.slice(2));
  if (args.has('--help') || args.has('-h')) {
    process.stdout.write(
      'usage: npx ts-node -T scripts/up.ts [--fast] [--keep]\n  --fast  test intervals (alerts fire in seconds)\n  --keep  keep the generated files after Ctrl-C\n',
    );
    return;
  }
  const fast = args.has('--fast');
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const stack = await LocalStack.start({
    ports: INTERACTIVE_PORTS,
    baseEnv: process.env,
    fast: fast ? TEST_INTERVALS : undefined,
    keepFiles: args.has('--keep'),
    log: (line) => say(`  ${line}`),
  });
  stack.receiver.onDelivery((d) =>
    say(`[notification ${new Date(d.receivedAt).toISOString()}] ${d.path} ${summarizeDelivery(d.body)}`),
  );

  const am = stack.alertmanager.url;
  say('');
  say(
    `The stack is up${fast ? ' (fast test intervals)' : ' (generated intervals: scrape 15s, alerts after their `for`)'}:`,
  );
  say(`  service        ${stack.service.url}   /health  /api/rate-limit  /api/metrics/prometheus  /metrics`);
  const links = await detectUiLinks(stack.prometheus.url, am);
  say(`  Prometheus     ${links.prometheus.join('  ')}  (job svc-ai-search-backend)`);
  say(
    `  Alertmanager   ${am}${links.alertmanagerUi ? `   ${links.alertmanagerUi}` : '   (no web UI in this build; use amtool:)'}`,
  );
  for (const c of links.amtool) say(`                 ${c}`);
  say(`  Redis          ${stack.redis.url}`);
  say(
    `  notifications  ${stack.receiver.url(RECEIVER_PATHS.chat)} (chat) and ${stack.receiver.url(RECEIVER_PATHS.webhook)} (webhook) are printed below`,
  );
  say(`  files          ${stack.workDir} (prometheus/, alertmanager/, dist/)`);
  say('');
  say('Changed from the synthesized manifests to run here:');
  for (const r of stack.documents.rewrites) say(`  ${r}`);
  say('');
  say('Send the test alert of spec §6.3:');
  say(
    `  curl -s -XPOST -H 'content-type: application/json' ${am}/api/v1/alerts -d '[{"labels":{"alertname":"TestAlert","severity":"warning","service":"svc-ai-search-backend"},"annotations":{"summary":"Test alert","description":"Sent by hand"}}]'`,
  );
  say(`  or: ALERTMANAGER_URL=${am} make test-alert`);
  say('Stop with Ctrl-C.');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      say(`${signal} again: exiting without waiting`);
      process.exit(130);
    }
    stopping = true;
    say(`\n${signal}: stopping the stack…`);
    stack.stop().then(
      () => {
        say('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`make up: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
