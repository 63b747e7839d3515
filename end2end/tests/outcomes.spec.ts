import { expect, test } from "./fixtures";
import { proposeViaApi, sandboxAuth, signIn, waitForHydration } from "./helpers";

test("a refund whose answer is lost shows outcome unknown, then verified after reconciliation", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer2");
  const proposal = await proposeViaApi(customer, "4822", "returns-policy:section-2");

  // The provider refunds, then holds its answer past our 1.5 s timeout.
  const faults = await customer.request.put("/sandbox/payments/v1/faults", {
    headers: sandboxAuth,
    data: {
      faults: [{ mode: "execute_then_timeout", key_prefix: proposal.id, first_attempt_only: true }],
      hang_ms: 4000,
    },
  });
  expect(faults.status()).toBe(200);

  const approver = await (await browser.newContext()).newPage();
  await signIn(approver, "approver");
  await approver.goto(`/proposals/${proposal.id}`);
  await waitForHydration(approver);
  await expect(approver.locator("body")).toHaveAttribute("data-live", "open");
  const watcher = await (await browser.newContext()).newPage();
  await signIn(watcher, "approver2");
  await watcher.goto("/queue");
  await waitForHydration(watcher);
  const card = watcher.locator(`[data-proposal="${proposal.id}"]`);
  await card.getByRole("button", { name: "Approve…" }).click();
  await card.getByTestId("confirm-approve").click();

  const status = approver.getByTestId("status");
  await expect(status).toHaveAttribute("data-status", "outcome_unknown");
  await expect(approver.getByTestId("verification")).toContainText("Nothing is assumed failed");
  await expect(status).toHaveAttribute("data-status", "verified", { timeout: 20_000 });
  await expect(approver.getByTestId("receipt")).toContainText("129.00 EUR");

  await customer.request.put("/sandbox/payments/v1/faults", { headers: sandboxAuth, data: { faults: [] } });
});

test("an approver rejects with a reason, and the reason is on the record", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer2");
  const proposal = await proposeViaApi(customer, "4824");

  const approver = await (await browser.newContext()).newPage();
  await signIn(approver, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);
  const card = approver.locator(`[data-proposal="${proposal.id}"]`);
  await card.getByRole("button", { name: "Reject…" }).click();
  await card.getByLabel("Why are you rejecting it?").fill("The parcel has not been delivered yet.");
  await card.getByRole("button", { name: "Reject proposal" }).click();
  await expect(approver.locator(`[data-decision="${proposal.id}"]`)).toContainText(
    "rejected: The parcel has not been delivered yet.",
  );

  await approver.goto(`/proposals/${proposal.id}`);
  await waitForHydration(approver);
  await expect(approver.getByTestId("status")).toHaveAttribute("data-status", "rejected");
  await expect(approver.locator(".card", { hasText: "Decisions" })).toContainText(
    "rejected: The parcel has not been delivered yet.",
  );
});
