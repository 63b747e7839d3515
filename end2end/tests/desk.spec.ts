import { expect, test } from "./fixtures";
import { freshOrder, pageAs, proposeViaApi, rejectAs, setApprovalLimit, shopCall, sizes, waitForHydration } from "./helpers";

// The approver's desk: every check the engine will apply is on the card
// before the decision, the decision is followed to its end, and the
// keyboard never approves by accident.

for (const size of sizes) {
  test(`on a ${size.name}, the card shows the policy window, open questions and what is still refundable, and a refund above it cannot be approved`, async ({ browser }) => {
    const admin = await pageAs(browser, "admin");
    const orderId = `e2e-desk-${size.name}-${Date.now()}`;
    await freshOrder(admin, orderId, 45);
    const proposal = await proposeViaApi(admin, orderId, "returns-policy:section-3", {
      open_questions: [{ question: "Was the item opened?", ask: "customer" }],
    });

    const approver = await pageAs(browser, "approver", size.viewport);
    await approver.goto("/queue");
    await waitForHydration(approver);
    const card = approver.locator(`[data-proposal="${proposal.id}"]`);
    const checks = card.getByTestId("checks");
    await expect(checks.locator('[data-check="policy_window"]')).toHaveText(
      /Outside the policy window: delivered 45 days ago, but "3\. Unopened items" allows 30 days\./,
    );
    await expect(checks.locator('[data-check="policy_window"]')).toHaveAttribute("data-level", "warning");
    await expect(checks.locator('[data-check="open_questions"]')).toContainText("Still unknown: Was the item opened?");
    await expect(checks.locator('[data-check="refundable"]')).toContainText("129.00 EUR of the order is still refundable; 129.00 EUR is proposed.");
    await expect(checks.locator('[data-check="limit"]')).toContainText("129.00 EUR is within your approval limit of 1000.00 EUR.");
    // Warnings are for judgement: Approve is still offered.
    await expect(card.getByRole("button", { name: "Approve…" })).toBeEnabled();
    await approver.screenshot({ path: test.info().outputPath(`${size.name}-queue-checks.png`), fullPage: true });

    // The shop refunds part of it at its support desk: less is left than proposed.
    await shopCall(admin, "post", `/api/v1/orders/${orderId}/refunds`, {
      refund_id: `desk-${orderId}`,
      amount_minor: 5000,
      currency: "EUR",
      channel: "support_desk",
      reference: "ticket: tent pole replaced",
      created_at: new Date().toISOString(),
    });
    await approver.reload();
    await waitForHydration(approver);
    const refundable = card.getByTestId("checks").locator('[data-check="refundable"]');
    await expect(refundable).toHaveText(/Only 79\.00 EUR of the order is still refundable, less than the 129\.00 EUR proposed\./);
    await expect(refundable).toHaveAttribute("data-level", "blocking");
    await expect(card.getByRole("button", { name: "Approve…" })).toBeDisabled();
    await expect(card.getByTestId("approve-blocked")).toHaveText(
      "Approve is not offered. Only 79.00 EUR of the order is still refundable, less than the 129.00 EUR proposed.",
    );

    // The proposal's own page shows the same checks.
    await approver.goto(`/proposals/${proposal.id}`);
    await waitForHydration(approver);
    await expect(approver.getByTestId("checks").locator('[data-check="refundable"]')).toHaveAttribute("data-level", "blocking");
    await approver.screenshot({ path: test.info().outputPath(`${size.name}-proposal-checks.png`), fullPage: true });
    await rejectAs(browser, "approver2", proposal.id, "Only looked at by the desk test.");
  });
}

test("an approver over their own limit sees Approve withheld with the limit, before any click", async ({ browser }) => {
  const admin = await pageAs(browser, "admin");
  const orderId = `e2e-desk-limit-${Date.now()}`;
  await freshOrder(admin, orderId, 5);
  await admin.goto("/admin");
  await waitForHydration(admin);
  const setLimit = (amount: string) => setApprovalLimit(admin, "approver2", amount);
  await setLimit("10.00");
  try {
    const proposal = await proposeViaApi(admin, orderId, "returns-policy:section-3");
    const approver = await pageAs(browser, "approver2");
    await approver.goto("/queue");
    await waitForHydration(approver);
    const card = approver.locator(`[data-proposal="${proposal.id}"]`);
    await expect(card.getByTestId("checks").locator('[data-check="limit"]')).toHaveAttribute("data-level", "blocking");
    await expect(card.getByRole("button", { name: "Approve…" })).toBeDisabled();
    await expect(card.getByTestId("approve-blocked")).toHaveText(
      "Approve is not offered. You cannot approve it: 129.00 EUR is above your approval limit of 10.00 EUR.",
    );
    await rejectAs(browser, "approver", proposal.id, "Only looked at by the desk test.");
  } finally {
    await setLimit("1000.00");
  }
});

test("an open confirmation says so when another approver decides the proposal meanwhile", async ({ browser }) => {
  const admin = await pageAs(browser, "admin");
  const orderId = `e2e-desk-elsewhere-${Date.now()}`;
  await freshOrder(admin, orderId, 5);
  const proposal = await proposeViaApi(admin, orderId, "returns-policy:section-3");
  const approver = await pageAs(browser, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);
  await expect(approver.locator("body")).toHaveAttribute("data-live", "open");
  const card = approver.locator(`[data-proposal="${proposal.id}"]`);
  await card.getByRole("button", { name: "Approve…" }).click();
  await expect(card.getByTestId("confirm-approve")).toBeVisible();

  await rejectAs(browser, "approver2", proposal.id, "The tent was never sent back.");

  const line = approver.locator(`[data-decision="${proposal.id}"]`);
  await expect(line).toHaveAttribute("data-kind", "elsewhere");
  await expect(line).toContainText("While your confirmation was open, this was decided in another tab or by someone else.");
  await expect(line).toContainText("rejected: The tent was never sent back.");
  await expect(card).toHaveCount(0);
});

test("Enter pressed twice on Approve opens the confirmation but never approves, and a skip link leads to the page", async ({ browser }) => {
  const admin = await pageAs(browser, "admin");
  const orderId = `e2e-desk-enter-${Date.now()}`;
  await freshOrder(admin, orderId, 5);
  const proposal = await proposeViaApi(admin, orderId, "returns-policy:section-3");
  const approver = await pageAs(browser, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);

  // The first Tab reaches the skip link, which takes the focus to the page itself.
  await approver.keyboard.press("Tab");
  const skip = approver.getByRole("link", { name: "Skip to main content" });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await approver.keyboard.press("Enter");
  await expect(approver.locator("main")).toBeFocused();

  const card = approver.locator(`[data-proposal="${proposal.id}"]`);
  await card.getByRole("button", { name: "Approve…" }).focus();
  await approver.keyboard.press("Enter");
  await approver.keyboard.press("Enter");
  await expect(card.getByTestId("confirm-heading")).toBeFocused();
  await expect(card.getByTestId("confirm-approve")).not.toBeFocused();
  await expect(approver.locator(`[data-decision="${proposal.id}"]`)).toHaveCount(0);
  await expect(card.getByTestId("status")).toHaveAttribute("data-status", "awaiting_approval");
  await approver.keyboard.press("Escape");
  await rejectAs(browser, "approver2", proposal.id, "Only looked at by the desk test.");
});

test("a four-eyes approval leaves 'to decide' for 'waiting for a second approver', is followed live to verified and listed under 'decided by me'", async ({ browser }) => {
  // Above the demo's four-eyes threshold of 500.00 EUR.
  const admin = await pageAs(browser, "admin");
  const orderId = `e2e-desk-four-eyes-${Date.now()}`;
  await freshOrder(admin, orderId, 5, 60000);
  const proposal = await proposeViaApi(admin, orderId, "returns-policy:section-3");

  const first = await pageAs(browser, "approver");
  await first.goto("/queue");
  await waitForHydration(first);
  await expect(first.locator("body")).toHaveAttribute("data-live", "open");
  const card = first.locator(`[data-proposal="${proposal.id}"]`);
  await expect(card.getByTestId("checks").locator('[data-check="permission"]')).toContainText(
    "it needs 2 different approvers, so 1 more must approve after you before anything is sent.",
  );
  await card.getByRole("button", { name: "Approve…" }).click();
  await card.getByTestId("confirm-approve").click();
  const line = first.locator(`[data-decision="${proposal.id}"]`);
  await expect(line).toContainText("your approval is recorded; waiting for 1 more approver (not you) before anything is sent.");
  // The focus lands on the result, and the card leaves "to decide".
  await expect(line).toBeFocused();
  await expect(card).toHaveCount(0);
  await first.locator('a[data-tab="waiting"]').click();
  await expect(first.locator('a[data-tab="waiting"]')).toHaveAttribute("aria-current", "page");
  const waiting = first.locator(`[data-proposal="${proposal.id}"]`);
  await expect(waiting).toHaveAttribute("data-approved-by-me", "true");
  await expect(waiting.getByRole("button", { name: "Approve…" })).toHaveCount(0);
  await first.screenshot({ path: test.info().outputPath("desktop-queue-waiting.png"), fullPage: true });
  await first.locator('a[data-tab="to_decide"]').click();
  await expect(first.locator('a[data-tab="to_decide"]')).toHaveAttribute("aria-current", "page");

  const second = await pageAs(browser, "approver2");
  await second.goto("/queue");
  await waitForHydration(second);
  const theirs = second.locator(`[data-proposal="${proposal.id}"]`);
  await theirs.getByRole("button", { name: "Approve…" }).click();
  await theirs.getByTestId("confirm-approve").click();

  // Both approvers follow it to its end without a reload, in green.
  for (const page of [first, second]) {
    const followed = page.locator(`[data-decision="${proposal.id}"]`);
    await expect(followed).toHaveAttribute("data-status", "verified");
    await expect(followed).toContainText(`Refund of 600.00 EUR for order ${orderId}: refunded and verified with the provider.`);
    await expect(followed).toHaveClass(/good/);
  }
  await first.goto("/queue?tab=decided");
  await waitForHydration(first);
  await expect(first.locator(`[data-proposal="${proposal.id}"]`).getByTestId("card-outcome")).toContainText("refunded and verified");

  // A finished proposal's page does not warn that the order changed: its
  // own refund changed it.
  await first.goto(`/proposals/${proposal.id}`);
  await waitForHydration(first);
  await expect(first.getByTestId("status")).toHaveAttribute("data-status", "verified");
  await expect(first.getByTestId("order-changed")).toHaveCount(0);
});

test("the queue is sorted, filtered and paged on the server", async ({ browser }) => {
  const admin = await pageAs(browser, "admin");
  const stamp = Date.now();
  const ids: string[] = [];
  for (const n of [1, 2]) {
    const orderId = `e2e-desk-sort-${stamp}-${n}`;
    await freshOrder(admin, orderId, 3);
    ids.push((await proposeViaApi(admin, orderId, "returns-policy:section-3")).id);
  }
  const approver = await pageAs(browser, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);
  await approver.getByLabel("Order").fill(`e2e-desk-sort-${stamp}-2`);
  await approver.getByLabel("Sort by").selectOption("newest");
  await approver.getByRole("button", { name: "Apply" }).click();
  await expect(approver).toHaveURL(new RegExp(`order=e2e-desk-sort-${stamp}-2`));
  await waitForHydration(approver);
  const cards = approver.getByTestId("queue").locator("[data-proposal]");
  await expect(cards).toHaveCount(1);
  await expect(cards.first()).toHaveAttribute("data-proposal", ids[1]);
  await expect(approver.getByLabel("Sort by")).toHaveValue("newest");

  await approver.goto("/queue?min_amount=1O0");
  await expect(approver.getByRole("alert")).toContainText('the smallest amount must be an amount such as 50 or 49.90, not "1O0"');
  for (const id of ids) await rejectAs(browser, "approver2", id, "Only looked at by the desk test.");
});
