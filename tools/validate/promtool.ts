import type { PrometheusConfig } from '../../charts/generators/prometheus-config';
import { retarget } from '../../charts/generators/prometheus-config';
import { toYaml } from '../../charts/generators/yaml';
import { toolCheck, type CheckResult, type ToolRunner, type Workspace } from './tools';

/** File name of the rule file in a workspace (the name Prometheus mounts it under). */
export const RULES_FILE = 'svc-ai-search-backend.rules.yml';

/**
 * `promtool check config` on `config` with its rule files pointed at `rulesText` in the
 * workspace, so the config and the rules it loads are checked together, with every linter.
 * Targets are not resolved, so `backend:8080` needs no cluster.
 */
export function checkPrometheusConfig(
  tools: ToolRunner,
  ws: Workspace,
  config: PrometheusConfig,
  rulesText: string,
): CheckResult {
  ws.write(RULES_FILE, rulesText);
  const path = ws.write('prometheus.yml', toYaml(retarget(config, { ruleFiles: [RULES_FILE] })));
  return toolCheck(
    'promtool check config',
    tools('promtool', ['check', 'config', '--lint=all', '--lint-fatal', path], { cwd: ws.dir }),
  );
}

/** `promtool check rules` with every linter, lint findings fatal. */
export function checkRules(tools: ToolRunner, ws: Workspace, rulesText: string): CheckResult {
  const path = ws.write(RULES_FILE, rulesText);
  return toolCheck(
    'promtool check rules',
    tools('promtool', ['check', 'rules', '--lint=all', '--lint-fatal', path], { cwd: ws.dir }),
  );
}

/** File name of the rule unit-test document in a workspace. */
export const RULE_TESTS_FILE = 'rules.test.yml';

/** `promtool test rules` of a unit-test document (see `ruleUnitTests`) against `rulesText`. */
export function testRules(tools: ToolRunner, ws: Workspace, rulesText: string, testsText: string): CheckResult {
  ws.write(RULES_FILE, rulesText);
  const path = ws.write(RULE_TESTS_FILE, testsText);
  return toolCheck('promtool test rules', tools('promtool', ['test', 'rules', path], { cwd: ws.dir }));
}
