/** The one settings module: types, defaults, parsing, the variable table. No server dependencies. */
export * from './errors';
export * from './parsers';
export * from './variables';
export * from './settings';
export * from './env';
export * from './sections/service';
export * from './sections/kvstore-topology';
export * from './sections/kvstore-durability';
export * from './sections/rate-limit';
export * from './sections/search';
export * from './sections/content';
export * from './sections/ai';
export * from './sections/alerting';
export * from './sections/deploy';
export * from './sections/backend-memory';
export * from './sections/shutdown-grace';
export * from './sections/label-pair';
