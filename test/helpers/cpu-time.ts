/**
 * The CPU time this process spends in `work`, ms (user and system, every thread of the process).
 *
 * The linear-time tests bound the work of one call on hostile input ("well under a second"): the
 * defects they guard took seconds to hours, the fixed code tens of ms. Measured by the clock, the
 * bound also counted the time the jest worker waited for a core, so it depended on what else the
 * machine ran (issue 36); measured in CPU time it counts only the work. It errs long (GC helper
 * threads count too), never short.
 */
export function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000;
}
