import { formatValue, labelMap, loadSettings, parseSettings, SettingsError } from '../../../configs';

describe('MONITORING_MODE and PROMETHEUS_RULE_LABELS', () => {
  it('default to standalone and no labels', () => {
    const s = loadSettings({});
    expect(s.deploy.monitoringMode).toBe('standalone');
    expect(s.deploy.prometheusRuleLabels).toEqual([]);
  });

  it('read key=value pairs (prefixed keys and empty values included) and write them back the same way', () => {
    const s = loadSettings({
      MONITORING_MODE: 'operator',
      PROMETHEUS_RULE_LABELS: 'release=kube-prometheus-stack, example.com/team=search,empty=',
    });
    expect(s.deploy.monitoringMode).toBe('operator');
    expect(labelMap(s.deploy.prometheusRuleLabels)).toEqual({
      release: 'kube-prometheus-stack',
      'example.com/team': 'search',
      empty: '',
    });
    expect(formatValue(s.deploy.prometheusRuleLabels)).toBe(
      'release=kube-prometheus-stack,example.com/team=search,empty=',
    );
  });

  it.each([
    ['MONITORING_MODE', 'both', 'expected one of standalone, operator'],
    [
      'PROMETHEUS_RULE_LABELS',
      'release',
      'expected a comma-separated list, each key=value with a Kubernetes label key and value',
    ],
    ['PROMETHEUS_RULE_LABELS', 'release=kube prometheus', 'key=value'],
    ['PROMETHEUS_RULE_LABELS', '-bad=x', 'key=value'],
  ])('refuse %s=%s naming the variable, the value and what is accepted', (name, value, accepted) => {
    try {
      loadSettings({ [name]: value });
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(SettingsError);
      const err = e as SettingsError;
      expect(err.code).toBe('ERR_SETTINGS_INVALID_VALUE');
      expect(err.message).toContain(`${name}=${JSON.stringify(value)} is not valid`);
      expect(err.message).toContain(accepted);
    }
  });

  it('check typed input too', () => {
    expect(() =>
      parseSettings({ deploy: { prometheusRuleLabels: [{ name: 'ok', value: 'no spaces allowed' }] } }),
    ).toThrow('PROMETHEUS_RULE_LABELS');
  });
});
