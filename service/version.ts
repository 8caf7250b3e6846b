import pkg from '../package.json';

/** The package version, reported by the health endpoints. */
export const SERVICE_VERSION: string = pkg.version;
/** Service name used in logs, health records and alert labels. */
export const SERVICE_NAME = 'svc-ai-search-backend';
