import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { LeanHistogram } from '../../../service/metrics/lean-histogram';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LABEL_SETS = [
  { route: 'search', method: 'GET', status_class: '2xx' },
  { route: 'chat', method: 'POST', status_class: '5xx' },
  { route: 'other', method: 'GET', status_class: '4xx' },
  // Same values, another key order: one series; its labels print in the order first given.
  { status_class: '2xx', method: 'GET', route: 'search' },
];

const valueArb = fc.oneof(
  fc.constantFrom(...BUCKETS, 0, -1, 11, 1e9),
  fc.double({ min: -1, max: 20, noNaN: true, noDefaultInfinity: true }),
);
const stepsArb = fc.array(
  fc.oneof(
    { weight: 20, arbitrary: fc.record({ set: fc.integer({ min: 0, max: LABEL_SETS.length - 1 }), value: valueArb }) },
    { weight: 1, arbitrary: fc.constant({ reset: true as const }) },
  ),
  { maxLength: 60 },
);

/** The same histogram twice: prom-client's and ours, each on its own registry. */
function pair() {
  const config = {
    name: 'x_seconds',
    help: 'Some durations',
    labelNames: ['route', 'method', 'status_class'] as const,
    buckets: BUCKETS,
  };
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({ ...config, labelNames: [...config.labelNames], registers: [theirs] });
  const lean = new LeanHistogram({ ...config, registers: [ours] });
  return { theirs, ours, reference, lean };
}

describe('LeanHistogram', () => {
  it(
    'exposes exactly what a prom-client Histogram fed the same observations exposes (text and JSON)',
    async () => {
      await fc.assert(
        fc.asyncProperty(stepsArb, async (steps) => {
          const { theirs, ours, reference, lean } = pair();
          const children = LABEL_SETS.map((l) => lean.labels(l));
          for (const step of steps) {
            if ('reset' in step) {
              theirs.resetMetrics();
              ours.resetMetrics();
              continue;
            }
            reference.labels(LABEL_SETS[step.set]).observe(step.value);
            children[step.set].observe(step.value);
          }
          expect(await ours.metrics()).toBe(await theirs.metrics());
          expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
        }),
        { numRuns: 200 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );

  it('a label set appears once observed, not when its recorder is made', async () => {
    const { ours } = pair();
    const lean = ours.getSingleMetric('x_seconds') as unknown as LeanHistogram<string>;
    lean.labels({ route: 'search', method: 'GET', status_class: '2xx' });
    expect(await ours.metrics()).toBe('# HELP x_seconds Some durations\n# TYPE x_seconds histogram\n');
  });

  it('refuses what prom-client refuses: unknown labels, values that are not numbers, bad buckets or names', () => {
    const { lean } = pair();
    expect(() => lean.labels({ route: 'search', verb: 'GET' } as never)).toThrow(
      'Added label "verb" is not included in initial labelset',
    );
    const child = lean.labels({ route: 'search', method: 'GET', status_class: '2xx' });
    expect(() => child.observe(Number.NaN)).toThrow(TypeError);
    expect(() => child.observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    const base = { name: 'y', help: 'y', labelNames: [], registers: [] };
    expect(() => new LeanHistogram({ ...base, buckets: [1, 1] })).toThrow('strictly increasing');
    expect(() => new LeanHistogram({ ...base, buckets: [] })).toThrow('strictly increasing');
    expect(() => new LeanHistogram({ ...base, buckets: [1], labelNames: ['le'] })).toThrow('Invalid label name');
    expect(() => new LeanHistogram({ ...base, name: 'not-a-name', buckets: [1] })).toThrow('Invalid metric name');
  });

  it('registers under its name: a second metric of that name on the same registry is refused', () => {
    const { ours } = pair();
    expect(
      () => new LeanHistogram({ name: 'x_seconds', help: 'again', labelNames: [], buckets: [1], registers: [ours] }),
    ).toThrow();
  });
});
