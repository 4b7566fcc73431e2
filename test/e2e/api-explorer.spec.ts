import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { chromiumForTests } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The API explorer (Swagger UI at /docs) in a real browser, as many users first meet the API:
 * Chromium, headless, driven by playwright-core: the one the npm package @sparticuz/chromium ships
 * (test/support/chromium.ts), so a fresh clone's `npm test` brings its own browser. Without it this
 * test fails, it does not skip.
 */
const HOST = 'openbot.test';
/** Headless, no sandbox (CI runs as root), and nothing of Chromium's own traffic to the network. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // A non-loopback name for this server, resolved in the browser (no DNS): Swagger UI treats
  // localhost and 127.0.0.1 specially (no online validator badge), a deployment's name does not.
  `--host-resolver-rules=MAP ${HOST} 127.0.0.1`,
];

jest.setTimeout(120_000);

describe('the API explorer at /docs in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://${HOST}:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('authorizes with an API key, runs "Try it out" on GET /v1/me, and shows the 200 answer', async () => {
    const browserBinary = chromiumForTests();
    const { secret, organizationId } = await t.createOrganization('Explorer Org');
    // A fresh temporary profile per launch (Playwright's default), removed when the browser closes.
    browser = await chromium.launch({ executablePath: browserBinary.executablePath, env: browserBinary.env, headless: true, args: CHROMIUM_ARGS });
    const page = await browser.newPage();
    page.setDefaultTimeout(20_000);
    // The page may reach this server only (no third-party script, font or validator): anything else is refused and recorded.
    const elsewhere: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`)) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });

    await page.goto(`${base}/docs`);
    await page.getByRole('button', { name: 'Authorize' }).first().click();
    const dialog = page.locator('.dialog-ux .modal-ux');
    const bearer = dialog.locator('.auth-container').filter({ hasText: 'bearer' });
    await bearer.locator('input').fill(secret);
    await bearer.getByRole('button', { name: 'Apply credentials' }).click();
    await bearer.getByRole('button', { name: 'Remove authorization' }).waitFor();
    await bearer.getByRole('button', { name: 'Close' }).click();

    const operation = page.locator('.opblock-get').filter({ has: page.locator('.opblock-summary-path[data-path="/v1/me"]') });
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.getByRole('button', { name: 'Execute' }).click();

    const live = operation.locator('.live-responses-table .response');
    await live.locator('.response-col_status').filter({ hasText: '200' }).waitFor();
    const body = await live.locator('.response-col_description .microlight').first().innerText();
    expect(JSON.parse(body)).toMatchObject({ organization: { id: organizationId, name: 'Explorer Org' } });
    // The request the page sent carried the key as a bearer token (shown in the curl line).
    expect(await operation.locator('.curl-command').innerText()).toContain(`Authorization: Bearer ${secret}`);
    expect(elsewhere).toEqual([]);
  });
});
