/**
 * The shape of a `promtool test rules` file, apart from the tests that fill it (rule-tests.ts,
 * rule-stories.ts), so those two import it without importing each other.
 */

/** One input series of a promtool unit test. */
export interface InputSeries {
  readonly series: string;
  readonly values: string;
}

/** An alert promtool must see firing. */
export interface ExpectedAlert {
  readonly exp_labels: Readonly<Record<string, string>>;
  readonly exp_annotations: Readonly<Record<string, string>>;
}

/** "At `eval_time`, exactly these `alertname` alerts fire." */
export interface AlertRuleTest {
  readonly eval_time: string;
  readonly alertname: string;
  readonly exp_alerts: readonly ExpectedAlert[];
}

/** One promtool unit test: series and the alerts expected of them. */
export interface PromtoolTest {
  readonly name: string;
  readonly interval: string;
  readonly input_series: readonly InputSeries[];
  readonly alert_rule_test: readonly AlertRuleTest[];
}

/** A `promtool test rules` file. */
export interface PromtoolTestFile {
  readonly rule_files: readonly string[];
  readonly evaluation_interval: string;
  readonly tests: readonly PromtoolTest[];
}
