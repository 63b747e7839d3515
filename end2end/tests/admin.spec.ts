import { expect, test } from "@playwright/test";
import { proposeViaApi, signIn, waitForHydration } from "./helpers";

test("above the four-eyes threshold set by an admin, two different approvers are needed", async ({ browser }) => {
  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, "admin");
  await admin.goto("/admin");
  await waitForHydration(admin);
  await expect(admin.getByTestId("users")).toContainText("approver2");
  await admin.getByLabel("Threshold (EUR)").fill("10.00");
  await admin.getByRole("button", { name: "Set threshold" }).click();
  await expect(admin.getByText("refunds above 10.00 EUR now need two approvers")).toBeVisible();

  try {
    const customer = await (await browser.newContext()).newPage();
    await signIn(customer, "customer");
    const proposal = await proposeViaApi(customer, "4823");
    expect(proposal.amount_display).toBe("31.50 EUR");

    const first = await (await browser.newContext()).newPage();
    await signIn(first, "approver");
    await first.goto("/queue");
    await waitForHydration(first);
    let card = first.locator(`[data-proposal="${proposal.id}"]`);
    await expect(card.getByTestId("approvals")).toHaveText("needs 2 different approvers, 0 so far");
    await card.getByRole("button", { name: "Approve…" }).click();
    await expect(card.getByTestId("confirm-four-eyes")).toHaveText(
      "This refund needs 2 different approvers. Yours is approval 1 of 2: nothing executes until someone else approves too.",
    );
    await card.getByTestId("confirm-approve").click();
    await expect(card.getByTestId("decision-result")).toHaveText(
      `Recorded. Proposal ${proposal.id} is now: Awaiting approval. Your approval counts; 1 more approver (not you) must approve before anything executes.`,
    );
    await expect(card.getByTestId("approvals")).toHaveText("needs 2 different approvers, 1 so far");
    // Approving twice does not make two approvers.
    await card.getByRole("button", { name: "Approve…" }).click();
    await card.getByTestId("confirm-approve").click();
    await expect(card.getByTestId("decision-error")).toHaveText(
      "you have already approved this proposal; a second approval must come from someone else",
    );

    const second = await (await browser.newContext()).newPage();
    await signIn(second, "approver2");
    await second.goto("/queue");
    await waitForHydration(second);
    card = second.locator(`[data-proposal="${proposal.id}"]`);
    await card.getByRole("button", { name: "Approve…" }).click();
    await expect(card.getByTestId("confirm-four-eyes")).toHaveText("Yours is approval 2 of 2: the refund executes when you confirm.");
    await card.getByTestId("confirm-approve").click();
    // The card leaves the queue as soon as the refund executes; the page keeps the decision.
    await expect(second.locator(`[data-decision="${proposal.id}"]`)).toContainText("Recorded");
    await second.goto(`/proposals/${proposal.id}`);
    await waitForHydration(second);
    await expect(second.getByTestId("status")).toHaveAttribute("data-status", "verified");
  } finally {
    // Put the demo threshold back for the other tests.
    await admin.getByLabel("Threshold (EUR)").fill("500.00");
    await admin.getByRole("button", { name: "Set threshold" }).click();
    await expect(admin.getByText("refunds above 500.00 EUR now need two approvers")).toBeVisible();
  }
});

test("an admin's bad input gets a precise message", async ({ page }) => {
  await signIn(page, "admin");
  await page.goto("/admin");
  await waitForHydration(page);
  await page.getByLabel("Threshold (EUR)").fill("12,50");
  await page.getByRole("button", { name: "Set threshold" }).click();
  await expect(page.getByText('"12,50" is not an amount; write it like 79.00')).toBeVisible();
});
