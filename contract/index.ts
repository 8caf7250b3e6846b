/**
 * The contract between the service and the stack: every name both must spell the same. Constants
 * and types only; imports nothing of ours (docs/architecture.md).
 */
export * from './metrics';
export * from './routes';
export * from './service';
