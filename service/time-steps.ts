/**
 * Work over a request's many parts (the items of a batch) in steps of the event loop: `step()`
 * after each part returns at once while the current step is shorter than `budgetMs`, and
 * otherwise a promise that resolves in a later turn (`setImmediate`), so other requests, timers
 * and I/O run between steps. One part is never split: the cost of a step is bounded by the
 * budget plus the largest part (an item's body is at most a megabyte).
 */
export const STEP_BUDGET_MS = 5;

export function stepper(budgetMs = STEP_BUDGET_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < budgetMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
