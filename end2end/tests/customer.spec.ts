import { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { pageAs, proposeViaApi, rejectAs, sizes, waitForHydration } from "./helpers";

// The customer's view in the customer's words: a chat that follows the
// newest message, no staff or engineering words, and their refunds with
// plain status and when the money arrives.

async function say(page: Page, text: string) {
  const before = await page.locator('[data-testid="transcript"] .msg.customer').count();
  const input = page.getByTestId("chat-input");
  await input.fill(text);
  await input.press("Enter");
  await expect(page.locator('[data-testid="transcript"] .msg.customer')).toHaveCount(before + 1);
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0);
}

for (const size of sizes) {
  test(`on a ${size.name}, the chat keeps the newest message in view, also when reopened, and speaks no staff words`, async ({ browser }) => {
    const customer = await pageAs(browser, "customer2", size.viewport);
    await customer.goto("/chat");
    await waitForHydration(customer);
    for (const text of ["what is your returns policy for unopened items?", "and for opened items?", "what is your shipping policy?", "what about damaged items?"]) {
      await say(customer, text);
      await expect(customer.locator(".transcript .msg").last()).toBeInViewport();
    }
    // Long enough to scroll: the start is out of view, the end in it.
    await expect(customer.locator(".transcript .msg").first()).not.toBeInViewport();
    await customer.screenshot({ path: test.info().outputPath(`${size.name}-chat-newest.png`) });

    await customer.reload();
    await waitForHydration(customer);
    await expect(customer.locator(".transcript .msg").last()).toBeInViewport();
    await expect(customer.getByTestId("chat-input")).toBeInViewport();

    // No conversation id, model name or citation tags for the customer.
    const page = customer.locator("main");
    await expect(page).not.toContainText("cnv_");
    await expect(page).not.toContainText("answered by");
    await expect(page).not.toContainText("countersign-offline");
    await expect(customer.locator(".transcript .msg.agent .text").filter({ hasText: /\[[a-z-]+:[^\]\s]+\]/ })).toHaveCount(0);
  });
}

test("a customer's refund links to their own refund page and is listed under My refunds with plain status and timing", async ({ browser }) => {
  const customer = await pageAs(browser, "customer2");
  const proposal = await proposeViaApi(customer, "4824");
  await expect(customer.getByRole("link", { name: "My refunds" })).toBeVisible();
  await customer.goto("/refunds");
  await waitForHydration(customer);
  const item = customer.locator(`[data-refund="${proposal.id}"]`);
  await expect(item).toContainText("Refund of 34.90 EUR for order 4824");
  await expect(item.getByTestId("refund-status")).toContainText("Waiting for our team");
  await expect(item.getByTestId("refund-status")).toContainText("We will decide by");
  await customer.screenshot({ path: test.info().outputPath("desktop-my-refunds.png"), fullPage: true });
  await item.getByRole("link", { name: "Refund of 34.90 EUR for order 4824" }).click();
  await expect(customer).toHaveURL(new RegExp(`/refunds/${proposal.id}$`));
  await expect(customer.getByRole("heading", { name: "Your refund of 34.90 EUR for order 4824" })).toBeVisible();
  await expect(customer.locator("main")).not.toContainText(proposal.id);
  await expect(customer.locator("main")).not.toContainText("lease");

  await rejectAs(browser, "approver", proposal.id, "The head lamp was never returned.");
  // Followed live: the customer reads the outcome and the reason.
  await expect(customer.getByTestId("refund-status")).toHaveAttribute("data-status", "rejected");
  await expect(customer.getByTestId("refund-status")).toContainText("Not approved");
  await expect(customer.getByTestId("refund-status")).toContainText("The head lamp was never returned.");

  const phone = await pageAs(browser, "customer2", sizes[1].viewport);
  await phone.goto("/refunds");
  await waitForHydration(phone);
  await expect(phone.locator(`[data-refund="${proposal.id}"]`)).toBeVisible();
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await phone.screenshot({ path: test.info().outputPath("phone-my-refunds.png"), fullPage: true });
});

test("staff have no Chat dead end: the link is for customers", async ({ browser }) => {
  const approver = await pageAs(browser, "approver");
  await expect(approver.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Review queue" })).toBeVisible();
  await expect(approver.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Chat" })).toHaveCount(0);
  await approver.goto("/chat");
  await waitForHydration(approver);
  await expect(approver.getByTestId("chat-new")).toHaveCount(0);
});
