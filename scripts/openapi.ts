/**
 * `make openapi`: writes the OpenAPI 3.1 document, generated from the route schemas
 * (service/http/contract/), to the path given (default dist/api/openapi.json), so a platform team
 * can publish it beside the manifests. It sits in dist/api/, not dist/ itself: `kubectl apply -f
 * dist/` reads every file of dist/ as a manifest, and a JSON document that is not one would fail it.
 *
 *   npx ts-node -T scripts/openapi.ts [out]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { openApiDocument } from '../service/http/contract/openapi';

const out = resolve(process.argv[2] ?? 'dist/api/openapi.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
process.stdout.write(`wrote ${out}\n`);
