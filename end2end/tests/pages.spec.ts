import { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { expectNoSeriousA11yViolations, pageAs, proposeViaApi, rejectAs, sizes, waitForHydration } from "./helpers";

// Every page, as the person it is for sees it, on a desktop and on a phone:
// an axe-core scan that fails on any serious or critical violation, and a
// screenshot kept under test-results/ (<size>-<page>.png).

async function scan(page: Page, path: string, shot: string) {
  await page.goto(path);
  await waitForHydration(page);
  await page.screenshot({ path: test.info().outputPath(`${shot}.png`), fullPage: true });
  await expectNoSeriousA11yViolations(page);
}

test.describe.serial("every page passes an accessibility scan on a desktop and a phone", () => {
  // A proposal of customer2's (order 4824) for the pages that show one,
  // rejected at the end so the order stays free for other specs.
  let proposalId = "";

  test.beforeAll(async ({ browser }) => {
    const page = await pageAs(browser, "customer2", sizes[0].viewport);
    proposalId = (await proposeViaApi(page, "4824")).id;
    // A conversation with a reply, so /chat is scanned with its transcript
    // and the "Talk to a person" button, not empty.
    await page.goto("/chat");
    await waitForHydration(page);
    await page.getByTestId("chat-input").fill("what is your shipping policy?");
    await page.getByTestId("chat-input").press("Enter");
    await expect(page.locator('[data-testid="transcript"] .msg.agent')).not.toHaveCount(0);
    await expect(page.getByTestId("chat-request-person")).toBeVisible();
    await page.context().close();
  });

  test.afterAll(async ({ browser }) => {
    await rejectAs(browser, "approver2", proposalId, "Only looked at by the page scans.");
  });

  for (const size of sizes) {
    const pages: [string | null, string, string][] = [
      [null, "/login", "login"],
      ["customer2", "/", "customer-home"],
      ["customer2", "/chat", "customer-chat"],
      ["customer2", "/refunds", "customer-refunds"],
      ["customer2", "/refunds/{proposal}", "customer-refund"],
      ["approver", "/queue", "approver-queue"],
      ["approver", "/proposals/{proposal}", "approver-proposal"],
      ["approver", "/inbox", "approver-inbox"],
      ["manager", "/audit", "manager-audit"],
      ["manager", "/ops", "manager-ops"],
      ["admin", "/admin", "admin"],
    ];
    for (const [user, path, name] of pages) {
      test(`${size.name}: ${path} as ${user ?? "a visitor"}`, async ({ browser }) => {
        const page = await pageAs(browser, user, size.viewport);
        await scan(page, path.replace("{proposal}", proposalId), `${size.name}-${name}`);
      });
    }
  }
});
