import { Page } from "@playwright/test";
import { expect, test } from "../tests/fixtures";
import { writeFileSync } from "node:fs";
import { freshOrder, pageAs, proposeViaApi, waitForHydration } from "../tests/helpers";

// How long from the approver's click on Confirm until both the approver's
// queue and the customer's refund page say "verified", live, without a
// reload. Times are read in the pages (Date.now() at the click, and when a
// MutationObserver sees the status change), on one machine's clock.

const rounds = Number(process.env.BENCH_ROUNDS ?? 25);

/** Resolves with Date.now() in the page when `selector` shows `status`. */
function whenStatus(page: Page, selector: string, status: string) {
  return page.evaluate(
    ([selector, status]) =>
      new Promise<number>((resolve) => {
        const check = () => {
          if (document.querySelector(selector)?.getAttribute("data-status") === status) {
            observer.disconnect();
            resolve(Date.now());
          }
        };
        const observer = new MutationObserver(check);
        observer.observe(document.body, { subtree: true, childList: true, attributes: true });
        check();
      }),
    [selector, status],
  );
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.round((sorted.length - 1) * p)];
}

test(`approve to verified on both pages, ${rounds} approvals`, async ({ browser }) => {
  const admin = await pageAs(browser, "admin");
  const approver = await pageAs(browser, "approver");
  const customer = await pageAs(browser, "customer3");
  const approverMs: number[] = [];
  const customerMs: number[] = [];
  await approver.goto("/queue");
  await waitForHydration(approver);
  await expect(approver.locator("body")).toHaveAttribute("data-live", "open");
  for (let round = 0; round < rounds; round++) {
    const orderId = `bench-live-${Date.now()}-${round}`;
    await freshOrder(admin, orderId, 5);
    const proposal = await proposeViaApi(admin, orderId);
    await customer.goto(`/refunds/${proposal.id}`);
    await waitForHydration(customer);
    await expect(customer.locator("body")).toHaveAttribute("data-live", "open");

    const card = approver.locator(`[data-proposal="${proposal.id}"]`);
    await card.getByRole("button", { name: "Approve…" }).click();
    const confirm = card.getByTestId("confirm-approve");
    await expect(confirm).toBeEnabled();
    const onApprover = whenStatus(approver, `[data-decision="${proposal.id}"]`, "verified");
    const onCustomer = whenStatus(customer, '[data-testid="refund-status"]', "verified");
    const clickedAt = await confirm.evaluate(
      (button) =>
        new Promise<number>((resolve) => {
          button.addEventListener("click", () => resolve(Date.now()), { capture: true, once: true });
          (button as HTMLButtonElement).click();
        }),
    );
    approverMs.push((await onApprover) - clickedAt);
    customerMs.push((await onCustomer) - clickedAt);
  }
  const report = (samples: number[]) => {
    const sorted = [...samples].sort((a, b) => a - b);
    return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), max: sorted[sorted.length - 1] };
  };
  const result = { rounds, approver: report(approverMs), customer: report(customerMs), approverMs, customerMs };
  console.log(JSON.stringify({ rounds, approver: result.approver, customer: result.customer }));
  writeFileSync(test.info().outputPath("live-update.json"), JSON.stringify(result, null, 2));
});
