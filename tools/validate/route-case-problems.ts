import { routesTest } from './amtool';
import type { RouteCase } from './route-cases';
import type { ToolRunner } from './tools';

/** `amtool config routes test` for each case: the receivers, in order, each once. */
export function routeCaseProblems(tools: ToolRunner, configPath: string, cases: readonly RouteCase[]): string[] {
  const problems: string[] = [];
  for (const c of cases) {
    const r = routesTest(tools, configPath, c.labels);
    const got = r.receivers.join(',');
    if (r.status !== 0) problems.push(`${c.name}: amtool failed: ${r.output}`);
    else if (new Set(r.receivers).size !== r.receivers.length)
      problems.push(`${c.name}: a receiver is reached twice: ${got}`);
    else if (got !== c.expected.join(','))
      problems.push(`${c.name}: expected ${c.expected.join(',')}, amtool resolved ${got}`);
  }
  return problems;
}
