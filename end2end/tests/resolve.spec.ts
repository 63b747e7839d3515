import { expect, test } from "./fixtures";
import { proposeViaApi, rejectAs, sandboxAuth, signIn, waitForHydration } from "./helpers";

test("a refund that needs a person is resolved from its page: no refund at the provider, send again after a fresh approval", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer3");
  const proposal = await proposeViaApi(customer, "4831");

  // Someone else used this proposal's idempotency key for another payment at
  // the provider, so the provider refuses our send as a reused key: only a
  // person can sort that out.
  const stray = await customer.request.post("/sandbox/payments/v1/charges", {
    headers: sandboxAuth,
    data: { id: `pay_e2e_stray_${proposal.id}`, amount_minor: 100, currency: "EUR" },
  });
  expect(stray.status()).toBe(200);
  const reused = await customer.request.post("/sandbox/payments/v1/refunds", {
    headers: { ...sandboxAuth, "idempotency-key": proposal.id },
    data: { payment_reference: `pay_e2e_stray_${proposal.id}`, amount_minor: 100, currency: "EUR", metadata: { proposal_id: "stray" } },
  });
  expect(reused.status()).toBe(200);

  const approver = await (await browser.newContext()).newPage();
  await signIn(approver, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);
  const card = approver.locator(`[data-proposal="${proposal.id}"]`);
  await card.getByRole("button", { name: "Approve…" }).click();
  await card.getByTestId("confirm-approve").click();
  // Leave the queue only once the approval is recorded: navigating while the
  // decision is in flight aborts it (a slow machine lost it that way).
  await expect(approver.locator(`[data-decision="${proposal.id}"]`)).toContainText("Refund of 24.00 EUR for order 4831");

  await approver.goto(`/proposals/${proposal.id}`);
  await waitForHydration(approver);
  await expect(approver.getByTestId("status")).toHaveAttribute("data-status", "needs_attention");
  const panel = approver.getByTestId("resolve");
  await expect(panel.getByTestId("resolve-why")).toContainText("different parameters");

  await panel.getByLabel("No refund exists: send it again").check();
  await panel.getByLabel("What you checked (kept in the journal)").fill("Provider dashboard: no refund on pay_4831; the key was reused for another payment.");
  await panel.getByTestId("resolve-submit").click();

  // The page follows the change live: the proposal failed (no money moved),
  // and its timeline names the resolution and the new proposal.
  await expect(approver.getByTestId("status")).toHaveAttribute("data-status", "failed");
  const resolved = approver.locator('[data-testid="timeline"] tr[data-kind="resolved"]');
  await expect(resolved).toContainText("resolution: no_refund");
  await expect(resolved).toContainText("new proposal: prp_");
  const retryId = /new proposal: (prp_[0-9a-f]+)/.exec((await resolved.textContent()) ?? "")?.[1] ?? "";
  expect(retryId).not.toBe("");
  expect(retryId).not.toBe(proposal.id);

  await approver.goto(`/proposals/${retryId}`);
  await waitForHydration(approver);
  await expect(approver.getByTestId("status")).toHaveAttribute("data-status", "awaiting_approval");

  // Leave the demo order as the widget's test expects to find it.
  await rejectAs(browser, "approver2", retryId, "Resolved in the end-to-end test; not to be paid.");
});
