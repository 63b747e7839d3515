import { expect, Page, test } from "@playwright/test";
import { signIn, waitForHydration } from "./helpers";

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
  const setLimit = async (amount: string) => {
    await admin.getByLabel("Approver", { exact: true }).selectOption({ label: "approver2" });
    await admin.getByLabel("Limit", { exact: true }).fill(amount);
    await admin.getByRole("button", { name: "Set limit" }).click();
    await expect(admin.getByText(`approver2 may now approve up to ${amount} EUR`)).toBeVisible();
  };
  await setLimit("750.00");
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
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toContainText("user:admin");
  await expect(rows.nth(0)).toContainText("user:approver2 · before:");
  await expect(rows.nth(0)).toContainText("after: 750.00 EUR");
  await expect(rows.nth(1)).toContainText("user:admin");
  await expect(rows.nth(1)).toContainText("user:approver2 · before: 750.00 EUR · after: 1000.00 EUR");

  // Every settings change at once; refunds stay out of that view.
  await manager.getByLabel("Action").selectOption("settings");
  await manager.getByLabel("Who").fill("");
  await manager.getByRole("button", { name: "Filter" }).click();
  await expect(manager).toHaveURL(/action=settings/);
  await expect(manager.locator('tbody tr[data-kind="approval_limit_set"]')).toHaveCount(2);
  await expect(manager.locator('tbody tr[data-kind="proposed"]')).toHaveCount(0);

  // The strict nonce policy let both pages hydrate and refused nothing of ours.
  expect(violations).toEqual([]);
});
