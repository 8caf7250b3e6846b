/** Validation of the synthesized stack with the real tools; shared by the tests and `make validate`. */
export * from './tools';
export * from './go-format';
export * from './promtool';
export * from './amtool';
export * from './promtool-tests';
export * from './rule-tests';
export * from './route-cases';
export * from './schemas';
export * from './references';
export * from './secrets';
export * from './route-case-problems';
export * from './operator-checks';
export * from './validate-stack';
export * from './crd-schemas';
