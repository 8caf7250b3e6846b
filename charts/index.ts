/** The cdk8s stack: generators, constructs and the helpers around the synthesized manifests. */
export * from './generators';
export * from './labels';
export * from './security';
export * from './checksum';
export * from './resources';
export * from './backend';
export * from './backend-secrets';
export * from './kvstore';
export * from './prometheus';
export * from './alertmanager';
export * from './stack-settings';
export * from './images';
export * from './ingress';
export * from './dashboard';
export * from './operator';
export * from './stack';
