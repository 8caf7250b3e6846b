import request from 'supertest';
import type { TestApp } from './app';
import { METRICS } from '../../contract';

/** `state` → value of the kvstore write-confirmation gauge in a pod's exposition. */
export async function writeConfirmation(t: TestApp): Promise<Record<string, number>> {
  const text = (await request(t.app).get('/api/metrics/prometheus')).text;
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${METRICS.kvstoreWriteConfirmation}\\{state="(\\w+)"\\} (\\S+)$`, 'gm')))
    out[m[1]] = Number(m[2]);
  return out;
}
