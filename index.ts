/**
 * The library entry of `svc-ai-search-backend`: the cdk8s constructs (`SearchBackendStack` and its
 * components), `loadStackSettings`, the contract (names the service and the stack share), the settings module and the pure config generators. Importing
 * it has no side effects: no server, no file, no timer. The service itself is the separate
 * `svc-ai-search-backend/service` entry (or the `svc-ai-search-backend` bin).
 */
export * from './contract';
export * from './configs';
export * from './charts';
