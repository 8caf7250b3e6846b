/**
 * Preload for the service process (`bench/search/http-stall.ts --node-args "-r
 * ts-node/register/transpile-only -r <this file>"`): records what fills the service's event-loop
 * stalls over 30 ms (`stall-attribution.ts`) and writes them, one JSON line each, with a summary
 * line last, to `$STALL_REPORT` when the process exits. The summary carries the monotonic clock
 * at `performance.now()` 0, µs, to line stalls up with a `--cpu-prof` profile's timestamps.
 */
import { writeFileSync } from 'node:fs';
import { attribute, summarize } from './stall-attribution';

const recording = attribute();
process.on('exit', () => {
  const stalls = recording.stop();
  const originUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
  const lines = [
    ...stalls.map((s) => JSON.stringify(s)),
    JSON.stringify({ summary: summarize(stalls), slicesPerGap: recording.slicesPerGap(), originUs }),
  ];
  writeFileSync(process.env.STALL_REPORT ?? 'stall-report.jsonl', `${lines.join('\n')}\n`);
});
