import { expect, Page, test } from "@playwright/test";
import { signIn, waitForHydration } from "./helpers";

/** Sends one chat message through the page's form and waits until it is saved. */
async function say(page: Page, text: string) {
  const before = await page.locator('[data-testid="transcript"] .msg.customer').count();
  const input = page.getByTestId("chat-input");
  await input.fill(text);
  await input.press("Enter");
  await expect(page.locator('[data-testid="transcript"] .msg.customer')).toHaveCount(before + 1);
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0);
  await expect(input).toHaveValue("");
}

test("a customer asks for a person, staff reply from the inbox, and the customer sees the reply live under the person's name", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  const staff = await (await browser.newContext()).newPage();

  await signIn(customer, "customer3");
  await customer.goto("/chat");
  await waitForHydration(customer);
  // A conversation of its own, whatever earlier tests left for this customer.
  await customer.getByTestId("chat-new").click();
  await expect(customer).toHaveURL(/conversation=cnv_/);
  await waitForHydration(customer);
  await expect(customer.locator("body")).toHaveAttribute("data-live", "open");
  const conversationId = await customer.locator(".chat[data-conversation]").getAttribute("data-conversation");
  expect(conversationId).toBeTruthy();

  await say(customer, "can I talk to a human?");
  const transcript = customer.getByTestId("transcript");
  await expect(transcript.locator(".msg.agent").last()).toContainText("I've asked a member of our team to join this conversation; they will reply here.");
  await expect(customer.getByTestId("chat-handover")).toContainText("A member of our team has been asked to join");
  await expect(customer.getByTestId("chat-request-person")).toHaveCount(0);

  await signIn(staff, "approver");
  await staff.goto("/inbox");
  await waitForHydration(staff);
  await expect(staff.locator("body")).toHaveAttribute("data-live", "open");
  const entry = staff.locator(`[data-testid="inbox-entry"][data-conversation="${conversationId}"]`);
  await expect(entry).toContainText("Kit Customer");
  await expect(entry.getByTestId("inbox-status")).toHaveText("Waiting for a person");
  await expect(entry.getByTestId("inbox-last-message")).toHaveText("can I talk to a human?");
  await entry.getByTestId("inbox-take-over").click();
  await expect(entry.getByTestId("inbox-status")).toHaveText("You have taken this conversation over");

  // The customer sees who joined without reloading.
  await expect(customer.getByTestId("chat-handover")).toContainText("Ada Approver from our team is in this conversation");
  await expect(transcript.locator(".msg.note").last()).toContainText("Ada Approver from our team joined the conversation.");

  await entry.getByTestId("inbox-reply-text").fill("Hello, this is Ada from the team. How can I help?");
  await entry.getByTestId("inbox-reply-send").click();

  const fromPerson = transcript.locator(".msg.person").last();
  await expect(fromPerson.locator(".speaker")).toHaveText("Ada Approver");
  await expect(fromPerson.locator(".text")).toHaveText("Hello, this is Ada from the team. How can I help?");

  // The customer's answer goes to Ada (the inbox shows it live); no agent replies.
  const agentReplies = await transcript.locator(".msg.agent").count();
  await say(customer, "My tent arrived torn.");
  await expect(entry.getByTestId("inbox-last-message")).toHaveText("My tent arrived torn.");
  await expect(transcript.locator(".msg.agent")).toHaveCount(agentReplies);

  await entry.getByTestId("inbox-hand-back").click();
  await expect(entry).toHaveCount(0);
  await expect(transcript.locator(".msg.note").last()).toContainText("Ada Approver handed the conversation back to our assistant.");
  await expect(customer.getByTestId("chat-request-person")).toBeVisible();
});
