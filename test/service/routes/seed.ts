import request from 'supertest';
import type { Express } from 'express';

/** A small site: articles, projects and experiences with distinct words. */
export const SITE_ITEMS = [
  {
    id: 'kubernetes-at-home',
    type: 'article',
    title: 'Running Kubernetes at home',
    body: 'Three mini PCs make a small cluster. Storage is where clusters hurt; Longhorn replicates volumes across nodes. Upgrades drain one node at a time.',
    summary: 'Lessons from a homelab cluster.',
    tags: ['kubernetes', 'homelab'],
    url: '/articles/kubernetes-at-home',
    date: '2024-03-09',
  },
  {
    id: 'bm25-explained',
    type: 'article',
    title: 'BM25 explained',
    body: 'BM25 ranks documents by term frequency and inverse document frequency, with length normalisation. Stemming makes measuring and measurements match.',
    tags: ['search'],
    url: '/articles/bm25-explained',
    date: '2024-11-02',
  },
  {
    id: 'prometheus-alerting',
    type: 'article',
    title: 'Alerting with Prometheus',
    body: 'Good alerts page a human only when users are hurting. Alertmanager routes by severity and groups related alerts.',
    tags: ['monitoring', 'prometheus'],
    date: '2023-05-20',
  },
  {
    id: 'ai-search-backend',
    type: 'project',
    title: 'AI search backend',
    body: 'An Express service with BM25 search, chat answers with citations and Prometheus metrics.',
    tags: ['typescript', 'search'],
    url: 'https://example.com/projects/ai-search',
    date: '2025-01-10',
  },
  {
    id: 'weather-station',
    type: 'project',
    title: 'Weather station',
    body: 'A Raspberry Pi logs temperature and humidity every minute.',
    tags: ['hardware'],
    date: '2023-06-01',
  },
  {
    id: 'platform-engineer-acme',
    type: 'experience',
    title: 'Platform engineer at Acme',
    body: 'Ran the Kubernetes platform for forty teams and built the deployment pipeline.',
    tags: ['kubernetes'],
    date: '2022-09-01',
  },
] as const;

/** Ingests `SITE_ITEMS` through the API (201 expected). */
export async function seedSite(app: Express, token?: string): Promise<void> {
  const req = request(app).post('/api/ingest-batch');
  if (token) req.set('Authorization', `Bearer ${token}`);
  const res = await req.send({ items: SITE_ITEMS });
  if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${JSON.stringify(res.body)}`);
}
