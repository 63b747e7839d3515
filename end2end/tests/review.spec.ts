import { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { openQueue, proposeViaApi, rejectAs, setApprovalLimit, signIn, waitForHydration } from "./helpers";

/** The outside agent proposes a refund with the customer's answer to its open question. */
async function proposeWithAnswer(page: Page, orderId: string) {
  return proposeViaApi(page, orderId, "returns-policy:section-3", {
    open_questions: [{ question: "Was the parcel opened?", ask: "customer", answer: "No, still sealed" }],
    recommendation: "Unopened: refund in full under section 3.",
  });
}

test("an approver sees a new proposal appear live, confirms exactly what executes, and watches it verify", async ({ browser }) => {
  const approverContext = await browser.newContext();
  const customerContext = await browser.newContext();
  const approver = await approverContext.newPage();
  const customer = await customerContext.newPage();

  await signIn(approver, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);
  await expect(approver.getByRole("heading", { name: "Review queue" })).toBeVisible();
  await expect(approver.locator("body")).toHaveAttribute("data-live", "open");

  // Order 4821 is the chat flagship's (chat.spec.ts); 4824 is shipped and still refundable.
  await signIn(customer, "customer2");
  const proposal = await proposeWithAnswer(customer, "4824");
  expect(proposal.amount_minor).toBe(3490);

  // Appears without a reload.
  const card = approver.locator(`[data-proposal="${proposal.id}"]`);
  await expect(card).toBeVisible();
  await expect(card).toContainText("Refund 34.90 EUR for order 4824");
  await card.getByText(/Evidence \(2 citations\)/).click();
  await expect(card.locator('[data-reference="returns-policy:section-3"]')).toContainText("3. Unopened items");
  // Next to what the agent cited: the order as it is now.
  await expect(card.getByTestId("order-now")).toContainText("The order now (version 1)");
  await expect(card.getByTestId("order-now")).toContainText("Still refundable: 34.90 EUR");
  await expect(card.getByTestId("order-now")).toContainText("1 × Head lamp — 34.90 EUR");
  await expect(card.getByTestId("order-changed")).toHaveCount(0);
  await expect(card).toContainText("Was the parcel opened?");

  await card.getByRole("button", { name: "Approve…" }).click();
  await expect(card.getByTestId("confirm-what")).toHaveText("Refund 34.90 EUR to payment pay_4824 for order 4824");
  await expect(card).toContainText(proposal.action_digest);
  await card.getByTestId("confirm-approve").click();
  // The decision is followed on the queue to its end, in green, without a reload.
  const decision = approver.locator(`[data-decision="${proposal.id}"]`);
  await expect(decision).toHaveAttribute("data-status", "verified");
  await expect(decision).toContainText("Refund of 34.90 EUR for order 4824: refunded and verified with the provider.");
  await expect(decision).toHaveClass(/good/);

  await approver.goto(`/proposals/${proposal.id}`);

  await waitForHydration(approver);
  await expect(approver.getByTestId("status")).toHaveAttribute("data-status", "verified");
  await expect(approver.getByTestId("receipt")).toContainText("34.90 EUR");
  await expect(approver.getByTestId("timeline")).toContainText("user:approver");
  // Each step says what it rests on: the refund's amount, what verification found.
  const timeline = approver.getByTestId("timeline");
  await expect(timeline.locator('tr[data-kind="approved"]')).toContainText(`approvers needed: 1 · digest ${proposal.action_digest.slice(0, 12)}`);
  await expect(timeline.locator('tr[data-kind="succeeded"]')).toContainText("amount: 34.90 EUR");
  await expect(timeline.locator('tr[data-kind="verified"]')).toContainText(/refunds under the key: \S+ 34\.90 EUR succeeded/);
  await expect(approver.locator(".state-machine .current")).toHaveText("Refunded and verified");

  // The customer sees their refund's page too, in their words: no staff
  // ids, digests or state machine.
  await customer.goto(`/proposals/${proposal.id}`);
  await waitForHydration(customer);
  const status = customer.getByTestId("refund-status");
  await expect(status).toHaveAttribute("data-status", "verified");
  await expect(status).toContainText("Refunded");
  await expect(status).toContainText("usually within 5 business days");
  await expect(customer.locator("main")).not.toContainText(proposal.id);
  await expect(customer.locator("main")).not.toContainText("digest");
  await expect(customer.locator(".state-machine")).toHaveCount(0);
});

test("an approver is told plainly why they cannot approve a refund they requested", async ({ page }) => {
  await signIn(page, "approver2");
  const proposal = await (async () => {
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute("content");
    const response = await page.request.post("/api/v1/proposals", {
      headers: { "x-csrf-token": csrf ?? "", origin: new URL(page.url()).origin },
      data: {
        order_id: "4830",
        evidence: [{ reference: "order:4830" }, { reference: "returns-policy:section-2" }],
        recommendation: "Damaged on arrival.",
      },
    });
    expect(response.status()).toBe(201);
    return response.json();
  })();
  await page.goto("/queue");
  await waitForHydration(page);
  const card = page.locator(`[data-proposal="${proposal.id}"]`);
  // Told on the card, before any click: Approve is not offered.
  await expect(card.getByRole("button", { name: "Approve…" })).toBeDisabled();
  await expect(card.getByTestId("approve-blocked")).toHaveText(
    "Approve is not offered. You cannot approve it: you asked for this refund or would receive it, so someone else must approve it.",
  );
  await rejectAs(page.context().browser()!, "approver", proposal.id, "Only looked at by the review test.");
});

test("an approver's half-written rejection survives a live update of another proposal", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer3");
  // Two lines of one order: both may wait for approval at once.
  const kept = await proposeViaApi(customer, "4830", "returns-policy:section-2", { lines: ["BOTTLE-1L"] });
  const other = await proposeViaApi(customer, "4830", "returns-policy:section-2", { lines: ["CAP-SUN"] });

  const approver = await openQueue(browser, "approver");
  const card = approver.locator(`[data-proposal="${kept.id}"]`);
  await card.getByRole("button", { name: "Reject…" }).click();
  const reason = card.getByLabel("Why are you rejecting it?");
  await reason.fill("Checking with the warehouse whether the bottle");
  await expect(reason).toBeFocused();

  // Meanwhile a second approver rejects the other proposal, which leaves
  // every queue live.
  await rejectAs(browser, "approver2", other.id, "Duplicate of another request.");
  await expect(approver.locator(`[data-proposal="${other.id}"]`)).toHaveCount(0);

  // The draft is still there, still focused; typing goes on where it was.
  await expect(reason).toHaveValue("Checking with the warehouse whether the bottle");
  await expect(reason).toBeFocused();
  await approver.keyboard.type(" arrived dented.");
  await card.getByRole("button", { name: "Reject proposal" }).click();
  await expect(approver.locator(`[data-decision="${kept.id}"]`)).toContainText(
    "Refund of 29.90 EUR for order 4830: rejected: Checking with the warehouse whether the bottle arrived dented. Open the proposal",
  );
  await approver.goto(`/proposals/${kept.id}`);
  await waitForHydration(approver);
  await expect(approver.locator(".card", { hasText: "Decisions" })).toContainText(
    "Checking with the warehouse whether the bottle arrived dented.",
  );
});

test("an approver over their limit is told the limit, and the proposal waits for someone allowed", async ({ browser }) => {
  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, "admin");
  await admin.goto("/admin");
  await waitForHydration(admin);
  const setLimit = (amount: string) => setApprovalLimit(admin, "approver2", amount);
  await setLimit("10.00");
  try {
    const customer = await (await browser.newContext()).newPage();
    await signIn(customer, "customer3");
    const proposal = await proposeViaApi(customer, "4830", "returns-policy:section-2");
    const approver = await (await browser.newContext()).newPage();
    await signIn(approver, "approver2");
    await approver.goto("/queue");
    await waitForHydration(approver);
    const card = approver.locator(`[data-proposal="${proposal.id}"]`);
    await expect(card.getByRole("button", { name: "Approve…" })).toBeDisabled();
    await expect(card.getByTestId("approve-blocked")).toHaveText(
      "Approve is not offered. You cannot approve it: 44.80 EUR is above your approval limit of 10.00 EUR.",
    );
    await expect(card.getByTestId("status")).toHaveAttribute("data-status", "awaiting_approval");
    // Nothing was recorded: the proposal is still untouched for an approver allowed to decide.
    await expect(card.getByTestId("approvals")).toHaveCount(0);
  } finally {
    await setLimit("1000.00");
  }
});

test("an expiry counts down on the page without a reload", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer3");
  const proposal = await proposeViaApi(customer, "4830", "returns-policy:section-2");
  const approver = await (await browser.newContext()).newPage();
  await approver.clock.install();
  await signIn(approver, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);
  const expiry = approver.locator(`[data-proposal="${proposal.id}"]`).getByTestId("expiry");
  await expect(expiry).toHaveText(/^expires in 47 h 59 min$/);
  await expect(expiry).not.toHaveClass(/soon/);
  // An hour and a half later by the page's clock: the same element, counting.
  await approver.clock.runFor(90 * 60 * 1000);
  await expect(expiry).toHaveText(/^expires in 46 h 29 min$/);
  // Within its last hour the deadline is highlighted and counts in seconds.
  await approver.clock.runFor((46 * 60 + 5) * 60 * 1000);
  await expect(expiry).toHaveText(/^expires in 2\d min \d\d s$/);
  await expect(expiry).toHaveClass(/soon/);
});

test("a queue without its live connection says so, and catches up on what changed meanwhile", async ({ browser }) => {
  const approver = await (await browser.newContext()).newPage();
  await signIn(approver, "approver");
  // The network drops every attempt at the live connection for now.
  await approver.route("**/api/live/proposals", (route) => route.abort("internetdisconnected"));
  await approver.goto("/queue");
  await waitForHydration(approver);
  const body = approver.locator("body");
  await expect(body).toHaveAttribute("data-live", "reconnecting");
  await approver.screenshot({ path: test.info().outputPath("queue-reconnecting.png") });

  // A refund is proposed while this page hears nothing.
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer3");
  const missed = await proposeViaApi(customer, "4830", "returns-policy:section-2");
  await expect(approver.locator(`[data-proposal="${missed.id}"]`)).toHaveCount(0);

  // The network is back: the browser reconnects and the page catches up.
  await approver.unroute("**/api/live/proposals");
  await expect(body).toHaveAttribute("data-live", "open", { timeout: 20_000 });
  await expect(approver.locator(`[data-proposal="${missed.id}"]`)).toBeVisible();
});

test("an approver decides with the keyboard alone, and a live update elsewhere leaves the focus where it was", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer3");
  // Two lines of one order wait at once (one live proposal per order and request).
  const kept = await proposeViaApi(customer, "4830", "returns-policy:section-2", { lines: ["BOTTLE-1L"] });
  const other = await proposeViaApi(customer, "4830", "returns-policy:section-2", { lines: ["CAP-SUN"] });

  const approver = await openQueue(browser, "approver");
  const card = approver.locator(`[data-proposal="${kept.id}"]`);
  const approve = card.getByRole("button", { name: "Approve…" });
  const reject = card.getByRole("button", { name: "Reject…" });
  const confirm = card.getByTestId("confirm-approve");
  // Opening the confirmation focuses its heading, never Confirm itself.
  const confirmation = card.getByTestId("confirm-heading");

  // Opening a panel moves the focus into it; Escape closes it and gives the focus back.
  await reject.focus();
  await approver.keyboard.press("Enter");
  await expect(card.getByLabel("Why are you rejecting it?")).toBeFocused();
  await approver.keyboard.press("Escape");
  await expect(reject).toBeFocused();
  await approver.keyboard.press("Shift+Tab");
  await expect(approve).toBeFocused();
  await approver.keyboard.press("Enter");
  await expect(confirmation).toBeFocused();
  await approver.keyboard.press("Escape");
  await expect(approve).toBeFocused();
  await approver.keyboard.press("Enter");
  await expect(confirmation).toBeFocused();
  await approver.keyboard.press("Tab");
  await expect(confirm).toBeFocused();

  // Another approver decides another proposal: it leaves this queue live,
  // and the focus stays on the confirmation.
  await rejectAs(browser, "approver2", other.id, "Duplicate of another request.");
  await expect(approver.locator(`[data-proposal="${other.id}"]`)).toHaveCount(0);
  await expect(confirm).toBeFocused();
  // The other line is proposed again, and appears without taking the focus.
  const later = await proposeViaApi(customer, "4830", "returns-policy:section-2", { lines: ["CAP-SUN"] });
  await expect(approver.locator(`[data-proposal="${later.id}"]`)).toBeVisible();
  await expect(confirm).toBeFocused();

  await approver.keyboard.press("Enter");
  const decided = approver.locator(`[data-decision="${kept.id}"]`);
  await expect(decided).toContainText("Refund of 29.90 EUR for order 4830");
  // The focus moves to the result, which outlives the card.
  await expect(decided).toBeFocused();

  // The refund is booked on the order: a proposal still queued for it now
  // rests on an older version, and its card says so without a reload.
  const stale = approver.locator(`[data-proposal="${later.id}"]`);
  await expect(stale.getByTestId("order-changed")).toContainText("The order changed since this was proposed");
  await stale.getByText(/Evidence \(2 citations\)/).click();
  await expect(stale.getByTestId("order-now")).toContainText("Still refundable: 14.90 EUR");
});
