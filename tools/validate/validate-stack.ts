import { dump } from 'js-yaml';
import { isDeepStrictEqual } from 'node:util';
import type { Env, Settings } from '../../configs';
import { alertRules } from '../../charts/generators/alert-rules';
import { stackNames } from '../../charts/generators/names';
import { monitoringDocuments, type Manifest } from '../read-manifests';
import { ALERTMANAGER_FILE, checkAlertmanagerConfig } from './amtool';
import { validateOperator } from './operator-checks';
import { routeCaseProblems } from './route-case-problems';
import { checkPrometheusConfig, checkRules, testRules } from './promtool';
import { referenceProblems } from './references';
import { routeCases, type RouteCase } from './route-cases';
import { ruleUnitTests } from './rule-tests';
import { schemaProblems } from './schemas';
import { secretLeaks } from './secrets';
import { problemsCheck, workspace, type CheckResult, type ToolRunner } from './tools';

/** What `validateStack` judges. */
export interface StackValidationInput {
  /** Every synthesized object. */
  readonly manifests: readonly Manifest[];
  /** The settings they were synthesized from (the rule unit tests follow their thresholds). */
  readonly settings: Settings;
  /** promtool and amtool. */
  readonly tools: ToolRunner;
  /** The synthesized files by name, with the environment of the synth: checked for secret values. */
  readonly leakCheck?: { readonly files: ReadonlyMap<string, string>; readonly env: Env };
  /** Route cases to run. @default routeCases() */
  readonly routeCases?: readonly RouteCase[];
}

/**
 * Every check of `make validate`, on objects in memory: Kubernetes schemas and references,
 * `promtool check config`, `promtool check rules`, `promtool test rules` (tests generated from
 * the settings), `amtool check-config`, `amtool config routes test` for every case, and
 * optionally no secret value in any file. In operator mode the config-document checks give way
 * to `validateOperator` (the custom resources, their rules and their routing). Returns one result per check; nothing throws for a
 * failed check.
 */
export function validateStack(input: StackValidationInput): CheckResult[] {
  const results: CheckResult[] = [
    problemsCheck(`kubernetes schemas (${input.manifests.length} objects)`, schemaProblems(input.manifests)),
    problemsCheck(
      'kubernetes references',
      referenceProblems(input.manifests, stackNames(input.settings.deploy.namePrefix), {
        kvstoreDeploy: input.settings.deploy.kvstoreDeploy,
      }),
    ),
  ];
  if (input.settings.deploy.monitoringMode === 'operator') {
    results.push(...validateOperator(input.manifests, input.settings, input.tools));
    if (input.leakCheck)
      results.push(
        problemsCheck('no secret values in the output', secretLeaks(input.leakCheck.files, input.leakCheck.env)),
      );
    return results;
  }
  let docs;
  try {
    docs = monitoringDocuments(input.manifests, stackNames(input.settings.deploy.namePrefix));
  } catch (e) {
    results.push(problemsCheck('config documents in ConfigMaps', [e instanceof Error ? e.message : String(e)]));
    return results;
  }
  const expectedRules = alertRules(input.settings);
  const rulesMatch = isDeepStrictEqual(
    JSON.parse(JSON.stringify(docs.rules)),
    JSON.parse(JSON.stringify(expectedRules)),
  );
  results.push(
    problemsCheck(
      'rules match the settings',
      rulesMatch
        ? []
        : [
            'the rule file differs from the one these settings generate: synthesize and validate with the same variables',
          ],
    ),
  );

  const ws = workspace();
  try {
    results.push(checkPrometheusConfig(input.tools, ws, docs.prometheusConfig, docs.text.rules));
    results.push(checkRules(input.tools, ws, docs.text.rules));
    if (rulesMatch) {
      const tests = ruleUnitTests(input.settings, docs.rules);
      const r = testRules(input.tools, ws, docs.text.rules, dump(tests.file, { lineWidth: -1 }));
      const skipped = tests.skipped.length
        ? `\nno firing test (settings make it impossible): ${tests.skipped.join('; ')}`
        : '';
      results.push({
        ...r,
        check: `promtool test rules (${tests.file.tests.length} tests)`,
        detail: `${r.detail}${skipped}`,
      });
    }
    const am = checkAlertmanagerConfig(input.tools, ws, docs.text.alertmanagerConfig);
    results.push(am);
    if (am.ok) {
      const cases = input.routeCases ?? routeCases();
      const configPath = ws.write(ALERTMANAGER_FILE, docs.text.alertmanagerConfig);
      results.push(
        problemsCheck(
          `amtool config routes test (${cases.length} cases)`,
          routeCaseProblems(input.tools, configPath, cases),
        ),
      );
    }
  } finally {
    ws.dispose();
  }
  if (input.leakCheck)
    results.push(
      problemsCheck('no secret values in the output', secretLeaks(input.leakCheck.files, input.leakCheck.env)),
    );
  return results;
}
