import { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { setApprovalLimit, signIn, waitForHydration } from "./helpers";

/** Collects every Content-Security-Policy violation the page reports. */
function collectCspViolations(page: Page, into: string[]) {
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) into.push(message.text());
  });
}

test("an approval limit an admin changes shows in the audit trail with who, before and after", async ({ browser }) => {
  const violations: string[] = [];
  const admin = await (await browser.newContext()).newPage();
  collectCspViolations(admin, violations);
  await signIn(admin, "admin");
  await admin.goto("/admin");
  await waitForHydration(admin);
  const setLimit = (amount: string) => setApprovalLimit(admin, "approver2", amount);
  // Other specs change limits too: an amount of this run's own picks out
  // the two rows this test wrote.
  const amount = `${700 + Math.floor(Math.random() * 290)}.${String(Math.floor(Math.random() * 100)).padStart(2, "0")}`;
  await setLimit(amount);
  // Back to the demo's limit for the other tests: a second change to read.
  await setLimit("1000.00");

  const manager = await (await browser.newContext()).newPage();
  collectCspViolations(manager, violations);
  await signIn(manager, "manager");
  await manager.goto("/audit");
  await waitForHydration(manager);
  await manager.getByLabel("Action").selectOption("approval_limit_set");
  await manager.getByLabel("Who").fill("admin");
  await manager.getByRole("button", { name: "Filter" }).click();
  await expect(manager).toHaveURL(/action=approval_limit_set/);
  const rows = manager.getByTestId("audit-table").locator("tbody tr");
  const raised = rows.filter({ hasText: `after: ${amount} EUR` });
  const restored = rows.filter({ hasText: `before: ${amount} EUR · after: 1000.00 EUR` });
  await expect(raised).toHaveCount(1);
  await expect(raised).toContainText("Ali Admin (admin)");
  await expect(raised).toContainText("user:approver2 · before:");
  await expect(restored).toHaveCount(1);
  await expect(restored).toContainText("Ali Admin (admin)");
  await expect(restored).toContainText("user:approver2");

  // Every settings change at once; refunds stay out of that view.
  await manager.getByLabel("Action").selectOption("settings");
  await manager.getByLabel("Who").fill("");
  await manager.getByRole("button", { name: "Filter" }).click();
  await expect(manager).toHaveURL(/action=settings/);
  await expect(
    manager.locator('tbody tr[data-kind="approval_limit_set"]').filter({ hasText: `after: ${amount} EUR` }),
  ).toHaveCount(1);
  await expect(manager.locator('tbody tr[data-kind="proposed"]')).toHaveCount(0);

  // The strict nonce policy let both pages hydrate and refused nothing of ours.
  expect(violations).toEqual([]);
});
