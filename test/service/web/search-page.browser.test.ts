import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { contractProblem } from '../../../tools/validate/openapi-answers';
import { requireBinary } from '../../../tools/harness/binary';
import { waitFor } from '../../../tools/harness/ports';
import { ServiceProcess } from '../../../tools/harness/service-process';

/**
 * The search page as a person sees it: the real service process in development (demo content on,
 * the page at `/`), opened in Debian's Chromium (headless, driven by playwright-core). The page
 * runs under its Content-Security-Policy, so a violation or a script error fails the test.
 */
/**
 * The page's API answers, proven against the OpenAPI document as they arrive (its requests are
 * the typed client's, so their parameters are checked by the compiler).
 */
function proveAnswers(page: Page, problems: string[]): void {
  page.on('response', async (r) => {
    const { pathname } = new URL(r.url());
    if (!pathname.startsWith('/api/')) return;
    const text = await r.text().catch(() => '');
    const problem = contractProblem({
      method: r.request().method(),
      path: pathname,
      status: r.status(),
      headers: r.headers(),
      text,
    });
    if (problem) problems.push(`contract: ${problem}`);
  });
}

describe('the search page in a real browser', () => {
  let svc: ServiceProcess;
  let browser: Browser;
  let page: Page;
  let dataDir: string;
  const problems: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-browser-'));
    svc = await ServiceProcess.start({
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ENVIRONMENT: 'development',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
      },
    });
    browser = await chromium.launch({
      executablePath: requireBinary('chromium'),
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()} (${m.location().url})`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
    });
    proveAnswers(page, problems);
  }, 90000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const resultTitles = () => page.$$eval('#results li h3', (hs) => hs.map((h) => h.textContent ?? ''));

  test('a shared link /?q= opens with that query’s results, links to the docs and highlighted snippets', async () => {
    await page.goto(`${svc.url}/?q=${encodeURIComponent('rate limiting')}`, { waitUntil: 'networkidle' });
    await page.waitForSelector('#results li');
    expect(await page.$eval('#q', (el) => (el as unknown as { value: string }).value)).toBe('rate limiting');
    expect(await page.$eval('#status', (el) => el.textContent)).toMatch(/^\d+ results?$/);
    const titles = await resultTitles();
    expect(titles.length).toBeGreaterThan(0);
    const hrefs = await page.$$eval('#results li h3 a', (as) => as.map((a) => a.getAttribute('href') ?? ''));
    expect(hrefs.some((h) => h.startsWith('/docs/rate-limiting.md#'))).toBe(true);
    // The API's highlight markup is rendered as markup, nothing else is.
    expect(await page.$$eval('#results .snippet mark', (ms) => ms.length)).toBeGreaterThan(0);
    expect(await page.$$eval('#results script', (ss) => ss.length)).toBe(0);
    expect(problems).toEqual([]);
  }, 60000);

  test('typing a query and submitting shows its results and updates the address for sharing', async () => {
    await page.goto(`${svc.url}/`, { waitUntil: 'networkidle' });
    await page.fill('#q', 'alertmanager');
    await Promise.all([
      page.waitForResponse((r) => r.url().includes('/api/search?')),
      page.click('#search-form button[type=submit]'),
    ]);
    await page.waitForSelector('#results li');
    expect((await resultTitles()).length).toBeGreaterThan(0);
    expect(new URL(page.url()).searchParams.get('q')).toBe('alertmanager');
    expect(problems).toEqual([]);
  }, 60000);

  test('an empty box browses every item newest first, with facet counts, a sort and a date range', async () => {
    await page.goto(`${svc.url}/`, { waitUntil: 'networkidle' });
    await page.waitForSelector('#results li');
    const status = (await page.textContent('#status')) ?? '';
    const total = Number(status.split(' ')[0]);
    expect(total).toBeGreaterThan(10);
    // The type facet's counts sum to the total (no type is checked).
    const counts = await page.$$eval('#facet-type label', (ls) =>
      ls.map((l) => Number(/\((\d+)\)/.exec(l.textContent ?? '')?.[1] ?? NaN)),
    );
    expect(counts.reduce((a, b) => a + b, 0)).toBe(total);
    expect(await page.$$eval('#facet-tag input', (is) => is.length)).toBeGreaterThan(0);
    await Promise.all([
      page.waitForResponse((r) => r.url().includes('sort=date%3Aasc') || r.url().includes('sort=date:asc')),
      page.selectOption('#sort', 'date:asc'),
    ]);
    expect(new URL(page.url()).searchParams.get('sort')).toBe('date:asc');
    await Promise.all([
      page.waitForResponse((r) => r.url().includes('date_from=2999-01-01')),
      page.fill('#date_from', '2999-01-01'),
    ]);
    await waitFor('nothing dated after 2999', async () => (await page.textContent('#status')) === '0 results');
    expect(problems).toEqual([]);
  }, 60000);

  test('the chat panel streams an answer with its sources as links', async () => {
    await page.goto(`${svc.url}/`, { waitUntil: 'networkidle' });
    await page.fill('#message', 'How does rate limiting work?');
    await page.click('#chat-form button[type=submit]');
    await page.waitForSelector('#sources li a', { timeout: 20000 });
    await waitFor('the streamed answer', async () => ((await page.textContent('#answer')) ?? '').length > 20);
    const sources = await page.$$eval('#sources li a', (as) => as.map((a) => a.getAttribute('href') ?? ''));
    expect(sources.some((h) => h.startsWith('/docs/rate-limiting.md#'))).toBe(true);
    expect(problems).toEqual([]);
  }, 60000);

  test('paging, the type and tag filters, and following a result to the document it cites', async () => {
    await page.goto(`${svc.url}/?q=${encodeURIComponent('rate limit')}`, { waitUntil: 'networkidle' });
    await page.waitForSelector('#results li');
    const firstPage = await resultTitles();
    await Promise.all([page.waitForResponse((r) => r.url().includes('offset=10')), page.click('#next')]);
    await page.waitForSelector('#results li');
    const secondPage = await resultTitles();
    expect(secondPage.length).toBeGreaterThan(0);
    expect(secondPage).not.toEqual(firstPage);
    expect(await page.isVisible('#prev')).toBe(true);
    // Tag filter, from a shared link: the demo tags each section with its document's name; the
    // checked tag is offered as a checked box with its count.
    await page.goto(`${svc.url}/?q=${encodeURIComponent('rate limit')}&tag=stack`, { waitUntil: 'networkidle' });
    await page.waitForSelector('#results li');
    const hrefs = await page.$$eval('#results li h3 a', (as) => as.map((a) => a.getAttribute('href') ?? ''));
    expect(hrefs.length).toBeGreaterThan(0);
    expect(hrefs.every((h) => h.startsWith('/docs/stack.md'))).toBe(true);
    expect(await page.isChecked('#facet-tag input[value="stack"]')).toBe(true);
    // Type facet: every type with its count under the tag filter (the demo holds articles only);
    // checking projects finds none, unchecking the tag then the type widens again.
    expect(await page.textContent('#facet-type')).toMatch(/project \(0\)/);
    await Promise.all([
      page.waitForResponse((r) => r.url().includes('type=project')),
      page.check('#facet-type input[value="project"]'),
    ]);
    await waitFor('an empty result for projects', async () => (await page.textContent('#status')) === '0 results');
    expect(new URL(page.url()).searchParams.getAll('type')).toEqual(['project']);
    await Promise.all([
      page.waitForResponse((r) => r.url().includes('/api/search?')),
      page.uncheck('#facet-type input[value="project"]'),
    ]);
    await Promise.all([
      page.waitForResponse((r) => r.url().includes('/api/search?') && !r.url().includes('tag=')),
      page.uncheck('#facet-tag input[value="stack"]'),
    ]);
    // Following a source link opens the document it cites.
    await page.waitForSelector('#results li h3 a');
    const target = (await page.getAttribute('#results li h3 a', 'href')) ?? '';
    const [doc] = await Promise.all([page.waitForNavigation(), page.click('#results li h3 a')]);
    expect(doc?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe(target.split('#')[0]);
    expect(await page.textContent('body')).toMatch(/^# /m);
    expect(problems).toEqual([]);
  }, 60000);
});

describe('the search page when the service refuses with 429', () => {
  let svc: ServiceProcess;
  let browser: Browser;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-browser-429-'));
    // Three searches a minute, no development multiplier: the fourth is refused.
    svc = await ServiceProcess.start({
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ENVIRONMENT: 'development',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_DEV_MULTIPLIER: '1',
        RATE_LIMIT_SEARCH_REQUESTS: '3',
        RATE_LIMIT_SEARCH_BURST: '3',
      },
    });
    browser = await chromium.launch({
      executablePath: requireBinary('chromium'),
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  }, 90000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('shows the retry time the API gives', async () => {
    for (let i = 0; i < 3; i++) await svc.request('/api/search?q=warm');
    const page = await browser.newPage();
    const problems: string[] = [];
    proveAnswers(page, problems);
    await page.goto(`${svc.url}/?q=rate`, { waitUntil: 'networkidle' });
    await waitFor('the 429 message', async () =>
      /^Too many requests: try again in \d+ s\.$/.test((await page.textContent('#status')) ?? ''),
    );
    expect(await page.getAttribute('#status', 'class')).toBe('error');
    expect(problems).toEqual([]);
  }, 60000);
});
