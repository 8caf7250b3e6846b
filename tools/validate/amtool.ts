import { toolCheck, type CheckResult, type ToolRunner, type Workspace } from './tools';

/** File name of the Alertmanager config in a workspace. */
export const ALERTMANAGER_FILE = 'alertmanager.yml';

/** `amtool check-config`: parses the config as Alertmanager 0.25 would (secret files are read at send time). */
export function checkAlertmanagerConfig(tools: ToolRunner, ws: Workspace, configText: string): CheckResult {
  const path = ws.write(ALERTMANAGER_FILE, configText);
  return toolCheck('amtool check-config', tools('amtool', ['check-config', path], { cwd: ws.dir }));
}

/** What `amtool config routes test` resolved for one label set. */
export interface RoutesTestResult {
  readonly status: number | null;
  /** Receivers in route order, as amtool prints them (duplicates kept). */
  readonly receivers: readonly string[];
  readonly output: string;
}

/**
 * `amtool config routes test --config.file=<file> label=value ...`: the receivers an alert with
 * these labels reaches, in order, exactly as Alertmanager's router resolves them.
 */
export function routesTest(
  tools: ToolRunner,
  configPath: string,
  labels: Readonly<Record<string, string>>,
): RoutesTestResult {
  const args = [
    'config',
    'routes',
    'test',
    `--config.file=${configPath}`,
    ...Object.entries(labels).map(([k, v]) => `${k}=${v}`),
  ];
  const r = tools('amtool', args);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  return {
    status: r.status,
    receivers: r.status === 0 && line ? line.split(',').map((s) => s.trim()) : [],
    output: `${r.stdout}${r.stderr}`.trim(),
  };
}
