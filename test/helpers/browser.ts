/**
 * Headless Chromium for the web UI tests, driven by playwright-core: the one browser set-up of
 * test/web/. Uses the system's Chromium (Debian's package: /usr/bin/chromium, installed by
 * .ci/run), never a downloaded browser. A test file starts the real server (helpers/server.ts),
 * then `openUi(server.baseUrl, cookie)`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page, type Request } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where screenshots go: test-results/ui/ (ignored by git). */
export const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', 'test-results', 'ui');

/**
 * Why the browser tests cannot run here, or null when they can. CI sets NETWARDEN_REQUIRE_BROWSER
 * so that a missing browser fails the run instead of skipping.
 */
export function browserUnavailable(): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  const reason = `web UI browser tests skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
  if (process.env.NETWARDEN_REQUIRE_BROWSER) throw new Error(reason);
  return reason;
}

/** browserUnavailable(), said on the console when the file's tests are skipped: `describe.skipIf(skipReason !== null)`. */
export function browserSkipReason(): string | null {
  const reason = browserUnavailable();
  if (reason) console.warn(reason);
  return reason;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Saves a full-page PNG as test-results/ui/<name>.png. */
  screenshot(name: string, page?: Page): Promise<void>;
  close(): Promise<void>;
}

/** Starts Chromium with a fresh, empty profile (its own user-data dir, removed on close). */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'netwarden-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
    viewport: { width: 1280, height: 900 },
    colorScheme: 'light',
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  context.setDefaultTimeout(15_000);
  const page = context.pages()[0] ?? (await context.newPage());
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    context,
    page,
    async screenshot(name, target = page) {
      await target.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Collects uncaught page errors and failed-to-load resources, so a test can assert there were none. */
export function watchPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of (400|401|404|409)/.test(message.text())) errors.push(`console: ${message.text()}`);
  });
  return errors;
}

/** Counts the requests the page makes to `path` (any query), from now until `stop()`. */
export function countRequests(page: Page, path: string): { count: () => number; stop: () => void } {
  let n = 0;
  const listener = (request: Request) => {
    if (new URL(request.url()).pathname === path) n++;
  };
  page.on('request', listener);
  return { count: () => n, stop: () => page.off('request', listener) };
}

export interface UiBrowser extends Browser {
  /** Uncaught page errors and failed loads so far (watchPageErrors): a test asserts there were none. */
  errors: string[];
  /** The server's address of a path: `url('/devices')`. */
  url(path: string): string;
}

/**
 * Chromium with a fresh profile on the server at `baseUrl`, signed in with the session `cookie`
 * (`netwarden_session=…`, as setupAdmin or adminWithKey return it) when one is given, its page
 * errors collected from the start.
 */
export async function openUi(baseUrl: string, cookie?: string): Promise<UiBrowser> {
  const browser = await launchBrowser();
  try {
    const errors = watchPageErrors(browser.page);
    if (cookie) {
      const at = cookie.indexOf('=');
      await browser.context.addCookies([{ name: cookie.slice(0, at), value: cookie.slice(at + 1), url: baseUrl }]);
    }
    return { ...browser, errors, url: (path) => `${baseUrl}${path}` };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
