import { BrowserContext, test as base } from "@playwright/test";

export { expect } from "@playwright/test";

/**
 * Playwright's `test`, plus one promise: every browser context a test opens
 * (`browser.newContext()`, for a second person or a phone-sized window) is
 * closed when the test ends, passed or failed. The browser lives as long as
 * the worker, so a context left open kept its pages running: their live
 * connections, polls and wasm went on loading the server and Chromium for
 * every later test (a CI run had 61 such pages open by the visitor tests).
 */
export const test = base.extend<{ closesTheContextsItOpens: void }>({
  closesTheContextsItOpens: [
    async ({ browser }, use) => {
      const before = new Set<BrowserContext>(browser.contexts());
      await use();
      const opened = browser.contexts().filter((context) => !before.has(context));
      await Promise.all(opened.map((context) => context.close()));
    },
    { auto: true },
  ],
});
