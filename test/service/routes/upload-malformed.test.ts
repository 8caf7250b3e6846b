import request from 'supertest';
import { MAX_FIELD_BYTES, MAX_UPLOAD_FIELDS, MAX_UPLOAD_FILES } from '../../../service/routes/upload';
import { buildTestApp, type TestApp } from '../../helpers/app';

const BOUNDARY = 'malformed-test-boundary';

/** One multipart part: a file when `filename` is given, else a plain field. */
function part(name: string, value: string, filename?: string): string {
  const disposition = `form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}`;
  return `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${filename ? 'Content-Type: text/plain\r\n' : ''}\r\n${value}\r\n`;
}

const end = `--${BOUNDARY}--\r\n`;
const txt = (i: number) => part('file', `Title ${i}\nBody ${i}`, `f${i}.txt`);

describe('POST /api/upload with malformed or over-limit multipart bodies', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ service: { environment: 'testing' } });
  });
  afterEach(() => t.close());

  const post = (body: string) =>
    request(t.app).post('/api/upload').set('Content-Type', `multipart/form-data; boundary=${BOUNDARY}`).send(body);
  const stored = async () => (await request(t.app).get('/api/v1/articles')).body.total as number;

  it('a body that ends inside a file (no closing boundary) is a 400, and the process lives on', async () => {
    const res = await post(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello`,
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'bad_request', field: 'body' });
    expect(res.body.message).toMatch(/malformed/);
    expect(await stored()).toBe(0);
    expect((await request(t.app).get('/health/live')).status).toBe(200);
  });

  it('a body that ends after a whole file but before the closing boundary stores nothing', async () => {
    const res = await post(txt(1));
    expect(res.status).toBe(400);
    expect(await stored()).toBe(0);
  });

  it(`more than ${MAX_UPLOAD_FILES} files: 413 too_many_files, nothing stored`, async () => {
    const res = await post(Array.from({ length: MAX_UPLOAD_FILES + 1 }, (_, i) => txt(i)).join('') + end);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: 'too_many_files' });
    expect(await stored()).toBe(0);
  });

  it(`more than ${MAX_UPLOAD_FIELDS} fields: 413 too_many_fields, nothing stored`, async () => {
    const fields = Array.from({ length: MAX_UPLOAD_FIELDS + 1 }, (_, i) => part(`x${i}`, 'v')).join('');
    const res = await post(txt(1) + fields + end);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: 'too_many_fields' });
    expect(await stored()).toBe(0);
  });

  it('more parts than files + fields allow: 413 too_many_parts, nothing stored', async () => {
    const parts =
      Array.from({ length: MAX_UPLOAD_FILES }, (_, i) => txt(i)).join('') +
      Array.from({ length: MAX_UPLOAD_FIELDS + 1 }, (_, i) => part(`x${i}`, 'v')).join('');
    const res = await post(parts + end);
    expect(res.status).toBe(413);
    expect(['too_many_parts', 'too_many_fields']).toContain(res.body.error);
    expect(await stored()).toBe(0);
  });

  it('a field value past its limit is refused, not cut short', async () => {
    const res = await post(part('type', `article${' '.repeat(MAX_FIELD_BYTES)}`) + txt(1) + end);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: 'field_too_large', field: 'type' });
    expect(await stored()).toBe(0);
  });

  it('exactly the limits is accepted: every file is stored', async () => {
    const res = await post(Array.from({ length: MAX_UPLOAD_FILES }, (_, i) => txt(i)).join('') + end);
    expect(res.status).toBe(201);
    expect(res.body.count).toBe(MAX_UPLOAD_FILES);
  });
});
