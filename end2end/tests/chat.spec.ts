import { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { clearProviderDelays, recordStatuses, signIn, slowProvider, statusesShown, waitForHydration } from "./helpers";

/** Sends one chat message through the page's form and waits for the reply to be saved. */
async function say(page: Page, text: string) {
  const before = await page.locator('[data-testid="transcript"] .msg.customer').count();
  const input = page.getByTestId("chat-input");
  await input.fill(text);
  await input.press("Enter");
  await expect(page.locator('[data-testid="transcript"] .msg.customer')).toHaveCount(before + 1);
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0);
  await expect(input).toHaveValue("");
}

test("the flagship: a customer chats about order 4821, an approver approves, both see it verified live", async ({ browser }) => {
  const customerContext = await browser.newContext();
  const approverContext = await browser.newContext();
  const customer = await customerContext.newPage();
  const approver = await approverContext.newPage();

  await signIn(approver, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);
  await expect(approver.locator("body")).toHaveAttribute("data-live", "open");

  await signIn(customer, "customer");
  await customer.goto("/chat");
  await waitForHydration(customer);
  await expect(customer.getByTestId("chat-empty")).toBeVisible();
  await expect(customer.locator("body")).toHaveAttribute("data-live", "open");

  await say(customer, "check order 4821 and refund it if it qualifies");
  const transcript = customer.getByTestId("transcript");
  await expect(transcript.locator(".msg.customer").last()).toHaveText(/check order 4821 and refund it if it qualifies/);
  await expect(transcript.locator(".msg.note")).toContainText("Coordinator handed the conversation to the refund specialist");
  const question = transcript.locator('.msg.agent[data-agent="refund_specialist"]').last();
  await expect(question.locator(".speaker")).toHaveText("Refund specialist");
  // Plain citations: the sources are listed under the reply, not tagged in it.
  await expect(question).toContainText("it was delivered 12 days ago.");
  await expect(question.locator(".text")).not.toContainText("[order:");
  await expect(question).toContainText("was the item opened? (yes / no)");
  // What the question rests on: the order and the policy passage it read.
  await expect(question.locator('.chip[data-reference="order:4821"]')).toBeVisible();
  const policy = question.locator('.chip[data-reference="returns-policy:section-3"]');
  await expect(policy).toContainText("3. Unopened items");
  // A source opens to the passage relied on, with the version read.
  await expect(policy.locator("blockquote")).toBeHidden();
  await policy.locator("summary").focus();
  await customer.keyboard.press("Enter");
  await expect(policy.locator("blockquote")).toContainText("Unopened items in their original packaging");
  await expect(policy).toContainText(/version [0-9a-f]{12}/);
  await expect(customer.locator("[data-chat-proposal]")).toHaveCount(0);

  await say(customer, "no, it is still sealed");
  const reply = transcript.locator(".msg.agent").last();
  await expect(reply).toContainText("I have prepared refund proposal");
  await expect(reply).toContainText("nothing has been refunded yet");
  const chatCard = reply.locator("[data-chat-proposal]");
  await expect(chatCard).toHaveCount(1);
  await expect(chatCard).toContainText("Refund 79.00 EUR for order 4821");
  await expect(chatCard.getByTestId("status")).toHaveText("Awaiting approval");
  const proposalId = await chatCard.getAttribute("data-chat-proposal");
  expect(proposalId).toMatch(/^prp_/);
  await customer.screenshot({ path: test.info().outputPath("chat-awaiting-approval.png"), fullPage: true });

  // The approver also follows the proposal's own page, open before the decision.
  const detail = await approverContext.newPage();
  await detail.goto(`/proposals/${proposalId}`);
  await waitForHydration(detail);
  await expect(detail.locator("body")).toHaveAttribute("data-live", "open");
  await expect(detail.getByTestId("status")).toHaveAttribute("data-status", "awaiting_approval");

  // Each state of the refund stays on screen for a moment, so that both
  // pages can be seen passing through it.
  await slowProvider(approver, proposalId!, 700);
  await recordStatuses(detail, '[data-testid="status"]');
  await recordStatuses(customer, `[data-chat-proposal="${proposalId}"] [data-testid="status"]`);

  // A source opened now stays open while the proposal's status changes live.
  await policy.locator("summary").click();
  await expect(policy.locator("blockquote")).toBeVisible();

  // The approver's queue shows it without a reload.
  const card = approver.locator(`[data-proposal="${proposalId}"]`);
  await expect(card).toBeVisible();
  await expect(card).toContainText("Refund 79.00 EUR for order 4821");
  await expect(card).toContainText("Was the item opened?");
  // The customer's answer, quoted as given, with a link to the message that gave it.
  await expect(card.getByTestId("answer")).toHaveText("no, it is still sealed");
  await expect(card.getByTestId("answer-link")).toHaveAttribute("href", /^\/chat\?conversation=cnv_\w+#m-\d+$/);
  await card.getByRole("button", { name: "Approve…" }).click();
  await expect(card.getByTestId("confirm-what")).toHaveText("Refund 79.00 EUR to payment pay_4821 for order 4821");
  await card.getByTestId("confirm-approve").click();
  await expect(approver.locator(`[data-decision="${proposalId}"]`)).toContainText("Refund of 79.00 EUR for order 4821");

  // Both pages reach verified live, without a reload.
  await expect(detail.getByTestId("status")).toHaveAttribute("data-status", "verified");
  await expect(detail.getByTestId("receipt")).toContainText("79.00 EUR");
  // Told to screen readers from a region that stays in place.
  await expect(detail.getByTestId("status-announcement")).toHaveText("Status: Refunded and verified");

  // The customer's chat card followed along live (no reload since the proposal appeared).
  await expect(chatCard.getByTestId("status")).toHaveAttribute("data-status", "verified");
  await expect(chatCard.getByTestId("status")).toHaveText("Refunded and verified");
  await expect(policy.locator("blockquote")).toBeVisible();
  await customer.screenshot({ path: test.info().outputPath("chat-verified.png"), fullPage: true });
  // Both showed every step on the way, in order, without a reload. The
  // provider's success is verified before it is recorded, so the two are
  // one step on screen (the timeline keeps both events).
  const steps = ["awaiting_approval", "executing", "verified"];
  expect(await statusesShown(detail, '[data-testid="status"]')).toEqual(steps);
  expect(await statusesShown(customer, `[data-chat-proposal="${proposalId}"] [data-testid="status"]`)).toEqual(steps);
  await clearProviderDelays(approver);

  // Resumable: after a reload the same conversation is back.
  await customer.reload();
  await waitForHydration(customer);
  await expect(customer.getByTestId("transcript")).toContainText("check order 4821 and refund it if it qualifies");
  await expect(customer.locator(`[data-chat-proposal="${proposalId}"] [data-testid="status"]`)).toHaveAttribute("data-status", "verified");

  // Staff read it from the proposal's link but cannot write to it; the
  // answer's link lands on the very message that gave it.
  const answerHref = await detail.getByTestId("answer-link").getAttribute("href");
  await detail.getByRole("link", { name: /^cnv_/ }).click();
  await expect(detail).toHaveURL(/\/chat\?conversation=cnv_/);
  await expect(detail.getByTestId("transcript")).toContainText("no, it is still sealed");
  await expect(detail.locator(`#${answerHref!.split("#")[1]}`)).toContainText("no, it is still sealed");
  await expect(detail.getByTestId("chat-read-only")).toBeVisible();
  await expect(detail.getByTestId("chat-input")).toHaveCount(0);

});

test("a chat message containing a script renders as text and never runs", async ({ page }) => {
  await signIn(page, "customer3");
  await page.goto("/chat");
  await waitForHydration(page);
  const hostile = "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">";
  await say(page, hostile);
  await expect(page.locator(".transcript .msg.customer .text").last()).toHaveText(hostile);
  // The agent answered in plain words.
  await expect(page.locator(".transcript .msg.agent").last()).toContainText("I didn't understand");
  expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
  expect(await page.locator(".transcript script, .transcript img").count()).toBe(0);

  // Server-rendered too, after a reload.
  await page.reload();
  await waitForHydration(page);
  await expect(page.locator(".transcript .msg.customer .text").last()).toHaveText(hostile);
  expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
});

test("a message over the limit is refused with the reason, and staff get a note instead of a chat", async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, "customer3");
  await page.goto("/chat");
  await waitForHydration(page);
  const input = page.getByTestId("chat-input");
  // A long paste is kept whole: the limit is shown, and Send waits until it fits.
  await input.fill("a".repeat(4001));
  await expect(input).toHaveValue("a".repeat(4001));
  await expect(page.getByTestId("chat-length")).toHaveText("4,001 of 4,000 characters: 1 too many. Shorten it to send it.");
  await expect(page.getByTestId("chat-send")).toBeDisabled();
  await input.press("Enter");
  await expect(input).toHaveValue("a".repeat(4001));
  await input.press("End");
  await input.press("Backspace");
  await expect(page.getByTestId("chat-length")).toHaveText("4,000 of 4,000 characters");
  await expect(page.getByTestId("chat-send")).toBeEnabled();
  await context.close();

  const staff = await browser.newPage();
  await signIn(staff, "manager");
  await staff.goto("/chat");
  await waitForHydration(staff);
  await expect(staff.getByTestId("chat-staff-note")).toHaveText(
    "Chat is for customers; open a customer's conversation from a proposal.",
  );
  await staff.close();
});

test("two orders in one message are checked at the same time and the reply gives each its own line", async ({ page }) => {
  await signIn(page, "customer");
  await page.goto("/chat");
  await waitForHydration(page);
  // A conversation of its own, whatever earlier tests left for this customer.
  const fresh = page.getByTestId("chat-new");
  if ((await fresh.count()) > 0) {
    await fresh.click();
    await expect(page).toHaveURL(/conversation=cnv_/);
    await waitForHydration(page);
  }
  await say(page, "please refund orders 4821 and 4823");
  const reply = page.getByTestId("transcript").locator(".msg.agent").last();
  // Whatever each order's state (other tests may have proposed them), each
  // investigator's finding has its own line.
  await expect(reply).toContainText("I checked 2 orders at the same time:");
  await expect(reply).toContainText("- Order 4821:");
  await expect(reply).toContainText("- Order 4823:");
  await expect(page.getByTestId("chat-background")).toHaveCount(0);
});
