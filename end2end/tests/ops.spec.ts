import { execFileSync } from "node:child_process";
import { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { proposeViaApi, signIn, waitForHydration } from "./helpers";

// `/ops`: a manager sees the lanes, the journal check and a dead letter,
// retries it, and watches it leave the list and end done, without reloading.

/** The e2e server's SQLite file (see playwright.config.ts). */
const database = "../target/e2e/countersign.db";

function sql(statement: string): string {
  return execFileSync("sqlite3", ["-cmd", ".timeout 5000", database, statement], { encoding: "utf8" }).trim();
}

/**
 * A notification to a person that failed for good, as the runner leaves
 * one when its handler gives up. No outside service of the e2e server
 * can be made to refuse a notification, so the row is written as the
 * runner would have left it: a real `person.notify` item for a real
 * proposal, dead-lettered with its error. Its timestamps are copied from
 * a schedule row, so they are in the store's own format. Everything after
 * (the view, the retry, the runner running it, the hints) is the real
 * server's.
 */
function deadNotification(proposalId: string): string {
  const id = `wi_e2e_${Date.now()}`;
  const payload = JSON.stringify({ proposal_id: proposalId, reason: "the refund needs a person" });
  sql(
    `INSERT INTO work_items (id, kind, lane, subject, payload, state, attempts, max_attempts, run_after,
       every_seconds, lease_owner, lease_until, last_error, last_note, last_run_at, dedupe_key,
       created_at, updated_at, finished_at)
     SELECT '${id}', 'person.notify', 'notifications', '${proposalId}', '${payload}', 'dead', 10, 10, run_after,
       NULL, NULL, NULL, 'the notification relay refused the connection', NULL, NULL, NULL,
       created_at, created_at, created_at
     FROM work_items WHERE every_seconds IS NOT NULL LIMIT 1`,
  );
  return id;
}

async function noSidewaysScroll(page: Page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

test("a manager retries a dead letter on /ops and watches it end done", async ({ browser, page }) => {
  // The daily journal check first runs a minute after the server starts;
  // the page shows its result when it comes, by itself.
  test.setTimeout(180_000);
  const proposal = await proposeViaApi(page, "4824");
  const id = deadNotification(proposal.id);

  await page.setViewportSize({ width: 1366, height: 768 });
  await signIn(page, "manager");
  await page.getByRole("link", { name: "Operations" }).click();
  await expect(page).toHaveURL(/\/ops$/);
  await waitForHydration(page);
  await expect(page.locator("body")).toHaveAttribute("data-live", "open");

  await expect(page.getByTestId("ops-lane")).toHaveCount(4);
  await expect(page.locator('[data-lane="payments"]')).toContainText("Sends approved refunds");
  await expect(page.getByTestId("ops-audit")).toContainText("Journal check:");
  await expect(page.getByTestId("ops-schedules")).toContainText("audit.verify");

  const item = page.locator(`[data-testid="ops-item"][data-id="${id}"]`);
  await expect(item).toHaveAttribute("data-state", "dead");
  await expect(item).toContainText("the notification relay refused the connection");
  await expect(item.getByRole("link", { name: proposal.id })).toHaveAttribute("href", `/proposals/${proposal.id}`);
  await expect(page.locator('[data-lane="notifications"] [data-count="dead"]')).toHaveText("1");
  await noSidewaysScroll(page);
  await page.screenshot({ path: test.info().outputPath("desktop-ops-dead-letter.png"), fullPage: true });

  await item.getByRole("button", { name: "Retry…" }).click();
  await expect(item.getByTestId("ops-confirm-sentence")).toContainText("Run person.notify for");
  await item.getByTestId("ops-confirm").click();
  await expect(page.getByTestId("ops-done")).toContainText("Retry person.notify: now queued.");

  // The runner takes it at once; the page hears it finished and drops it.
  await expect(item).toHaveCount(0);
  await expect(page.locator('[data-lane="notifications"] [data-count="dead"]')).toHaveText("0");
  await expect.poll(() => sql(`SELECT state FROM work_items WHERE id = '${id}'`)).toBe("done");
  // Done, the notification raised its alert, which the manager acknowledges.
  const alert = page.getByTestId("ops-alerts").locator("li", { hasText: proposal.id });
  await expect(alert).toBeVisible();
  await alert.getByRole("button", { name: "Acknowledge" }).click();
  await expect(alert).toHaveCount(0);

  // The daily check has run and its finding is shown. Other specs on this
  // shared server tamper with the journal on purpose (audit.spec.ts), so the
  // finding may be "intact" or "BROKEN"; either way it is the check's own.
  await expect(page.getByTestId("ops-audit")).toHaveAttribute("data-intact", /^(true|false)$/, { timeout: 90_000 });
  await expect(page.getByTestId("ops-audit")).toContainText(/journal (intact|BROKEN)/);
  await page.screenshot({ path: test.info().outputPath("desktop-ops-after-retry.png"), fullPage: true });

  const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const small = await phone.newPage();
  await signIn(small, "manager");
  await small.goto("/ops");
  await waitForHydration(small);
  await expect(small.getByTestId("ops-lane")).toHaveCount(4);
  await noSidewaysScroll(small);
  await small.screenshot({ path: test.info().outputPath("phone-ops.png"), fullPage: true });
  await phone.close();
});

test("an approver is not shown /ops", async ({ page }) => {
  await signIn(page, "approver");
  await expect(page.getByRole("link", { name: "Operations" })).toHaveCount(0);
  const response = await page.goto("/ops");
  expect(response?.status()).toBe(403);
});
