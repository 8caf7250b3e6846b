import fc from 'fast-check';
import { ManualClock } from '../../helpers/manual-clock';
import { clientId } from '../../../service/ratelimit/client-key';
import { MemoryDecisionStore } from '../../../service/ratelimit/memory-decision-store';
import { verdictOf } from '../../../service/ratelimit/verdict';
import { planFor } from './helpers';
import { CLIENTS, ReferenceModel, stepsArb, tierArb } from './reference-model';
import { PROPERTY_HANG_GUARD_MS } from '../../helpers/property';

describe('memory store against the reference model', () => {
  it(
    'agrees on every decision, remaining count, full-again time and Retry-After',
    () => {
      fc.assert(
        fc.property(tierArb, tierArb, tierArb, stepsArb(80), (global, ip, search, steps) => {
          const plan = planFor({ global, ip, search }, 'search');
          const clock = new ManualClock();
          const store = new MemoryDecisionStore(clock, 1000);
          const model = new ReferenceModel([global, ip, search]);
          for (const step of steps) {
            if ('wait' in step) {
              clock.advance(step.wait);
              continue;
            }
            const keys = plan.keys(clientId(CLIENTS[step.client], 64));
            const now = clock.now();
            const d = store.decideAtOnce(plan, keys);
            const admitted = model.hit(keys, now);
            expect(d.allowed).toBe(admitted);
            expect(d.now).toBe(now);
            const v = verdictOf(plan, d);
            keys.forEach((k, i) => {
              expect(v.remaining[i]).toBe(model.remaining(i, k, now));
              expect(v.msUntilFull[i]).toBe(model.msUntilFull(i, k, now));
            });
            // The tier shown in the headers has the fewest requests left.
            expect(v.remaining[v.shown]).toBe(Math.min(...v.remaining));
            if (!admitted) {
              // Retry-After is whole seconds, at least 1, and the smallest such wait that works.
              const s = v.retryAfterSeconds;
              expect(s).toBeGreaterThanOrEqual(1);
              expect(model.wouldAdmit(keys, now + s * 1000)).toBe(true);
              if (s > 1) expect(model.wouldAdmit(keys, now + (s - 1) * 1000)).toBe(false);
              expect(v.admitted[v.shown]).toBe(false);
            }
          }
        }),
        { numRuns: 300 },
      );
    },
    PROPERTY_HANG_GUARD_MS,
  );
});
