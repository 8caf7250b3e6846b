import pkg from '../../package.json';

/** The package version, reported by the health endpoints. */
export const SERVICE_VERSION: string = pkg.version;
