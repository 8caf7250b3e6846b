/** Limits far above what the hostile suites send, except where a test is about limits. */
export const WIDE_LIMITS: Readonly<Record<string, string>> = Object.fromEntries(
  ['GLOBAL', 'IP', 'SEARCH', 'CHAT', 'UPLOAD'].flatMap((tier) => [
    [`RATE_LIMIT_${tier}_REQUESTS`, '100000000'],
    [`RATE_LIMIT_${tier}_BURST`, '100000000'],
  ]),
);

/**
 * The environment of a service process under hostile traffic: production settings with a write
 * token, and nothing inherited from the test runner's environment but PATH and HOME.
 */
export function hostileEnv(token: string, extra: Readonly<Record<string, string>>): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ENVIRONMENT: 'production',
    LOG_LEVEL: 'info',
    API_TOKEN: token,
    ...extra,
  };
}
