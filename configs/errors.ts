/**
 * Stable error codes for configuration faults. Tests assert on `code`, people read `message`.
 */
export type SettingsErrorCode = 'ERR_SETTINGS_INVALID_VALUE' | 'ERR_SETTINGS_CONFLICT' | 'ERR_SETTINGS_UNKNOWN_KEY';

/** One problem with one setting. */
export interface SettingsIssue {
  /** Stable code, e.g. `ERR_SETTINGS_INVALID_VALUE`. */
  readonly code: SettingsErrorCode;
  /** Environment variable (or settings field) at fault. */
  readonly variable: string;
  /** The offending value as given; `<hidden>` for secrets. */
  readonly value: string;
  /** Human sentence naming the variable, the value and what is accepted. */
  readonly message: string;
}

/**
 * Thrown by `loadSettings`/`parseSettings` when any setting is bad. Carries every problem found,
 * so a user fixes them all in one go; `message` lists them one per line.
 */
export class SettingsError extends Error {
  /** Code of the first issue (all issues are in `issues`). */
  readonly code: SettingsErrorCode;
  readonly issues: readonly SettingsIssue[];

  constructor(issues: readonly SettingsIssue[]) {
    super(
      issues.length === 1
        ? `Invalid settings: ${issues[0].message}`
        : `Invalid settings (${issues.length} problems):\n${issues.map((i) => `  - ${i.message}`).join('\n')}`,
    );
    this.name = 'SettingsError';
    this.code = issues[0]?.code ?? 'ERR_SETTINGS_INVALID_VALUE';
    this.issues = issues;
  }
}
