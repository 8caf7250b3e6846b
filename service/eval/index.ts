/** Evaluation of search quality: trec_eval measures and a runner over the index. */
export * from './metrics';
export * from './evaluator';
