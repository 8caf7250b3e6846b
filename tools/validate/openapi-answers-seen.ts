/**
 * Contract problems seen in the answers of a real service process (tools/harness/service-process.ts),
 * collected for test/helpers/contract-setup.ts to fail the test file with. Kept apart from
 * openapi-answers.ts so the setup can read it without loading the OpenAPI document and ajv in
 * test files that never use it.
 */
export const contractProblemsSeen: string[] = [];
