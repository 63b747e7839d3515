import { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { slowChatPort } from "../playwright.config";
import { signIn, waitForHydration } from "./helpers";

// Against the second server, whose chat model takes 30 s to answer: every
// reply below is still being written when Stop is pressed.
test.use({ baseURL: `http://127.0.0.1:${slowChatPort}` });

test("Stop ends a reply being written at once, and the conversation goes on", async ({ page }) => {
  await signIn(page, "customer");
  await page.goto("/chat");
  await waitForHydration(page);
  const input = page.getByTestId("chat-input");
  const [send, stop] = [page.getByTestId("chat-send"), page.getByTestId("chat-stop")];
  await expect(stop).toBeDisabled();
  await input.fill("what is your returns policy for unopened items?");
  await input.press("Enter");
  await expect(page.getByTestId("chat-thinking")).toBeVisible();
  // Sending again would wait for this reply, or stop it for the new message.
  await expect(send).toHaveText("Send (after this reply)");
  await expect(page.getByTestId("chat-send-now")).toBeVisible();
  await expect(stop).toBeEnabled();

  const pressed = Date.now();
  await stop.click();
  // The turn ends on Stop, long before the model's 30 s.
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0, { timeout: 10_000 });
  expect(Date.now() - pressed).toBeLessThan(20_000);
  const transcript = page.getByTestId("transcript");
  await expect(transcript.locator(".msg.customer").last()).toHaveText(/what is your returns policy for unopened items\?/);
  await expect(transcript.locator(".msg").last()).toHaveText(/Stopped before finishing\./);
  await expect(page.getByTestId("chat-next-agent")).not.toHaveText("A reply is being written…");
  await expect(send).toHaveText("Send");
  await expect(page.getByTestId("chat-send-now")).toHaveCount(0);
  await expect(stop).toBeDisabled();
  await page.screenshot({ path: test.info().outputPath("chat-stopped.png"), fullPage: true });
});

test("after a reload mid-reply the page follows the running turn, and Stop still lands", async ({ page }) => {
  await signIn(page, "customer2");
  await page.goto("/chat");
  await waitForHydration(page);
  const input = page.getByTestId("chat-input");
  await input.fill("is order 4822 still refundable?");
  await input.press("Enter");
  await expect(page.getByTestId("chat-thinking")).toBeVisible();

  await page.reload();
  await waitForHydration(page);
  // The reply is still being written: a second message would wait for it, and it can be stopped.
  await expect(page.getByTestId("chat-next-agent")).toHaveText("A reply is being written…");
  await expect(page.locator(".transcript.pending .msg.customer")).toHaveText(/is order 4822 still refundable\?/);
  await expect(page.getByTestId("chat-thinking")).toBeVisible();
  await expect(page.getByTestId("chat-send")).toHaveText("Send (after this reply)");
  await page.getByTestId("chat-stop").click();
  // The page learns the turn ended without a reload.
  await expect(page.getByTestId("chat-next-agent")).not.toHaveText("A reply is being written…", { timeout: 10_000 });
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0);
  const transcript = page.getByTestId("transcript");
  await expect(transcript.locator(".msg.customer").last()).toHaveText(/is order 4822 still refundable\?/);
  await expect(transcript.locator(".msg").last()).toHaveText(/Stopped before finishing\./);
  await expect(page.getByTestId("chat-send")).toHaveText("Send");
  await expect(page.getByTestId("chat-stop")).toBeDisabled();
});

test("while a reply is written the sent text leaves the field, and a new draft typed meanwhile survives the end of the turn", async ({ page }) => {
  await signIn(page, "customer3");
  await page.goto("/chat");
  await waitForHydration(page);
  const input = page.getByTestId("chat-input");
  await input.fill("what is your returns policy for opened items?");
  await input.press("Enter");
  await expect(page.getByTestId("chat-thinking")).toBeVisible();
  // Sent: shown as the message being answered, above the hint, and gone from the field.
  await expect(page.locator(".transcript.pending .msg.customer")).toHaveText(/returns policy for opened items\?/);
  await expect(input).toHaveValue("");
  const pendingBox = await page.locator(".transcript.pending").boundingBox();
  const hintBox = await page.getByTestId("chat-next-agent").boundingBox();
  expect(pendingBox!.y).toBeLessThan(hintBox!.y);

  await input.fill("and for damaged ones?");
  await page.getByTestId("chat-stop").click();
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0, { timeout: 10_000 });
  await expect(page.getByTestId("transcript").locator(".msg").last()).toHaveText(/Stopped before finishing\./);
  await expect(input).toHaveValue("and for damaged ones?");
});

/** Opens a new conversation for `user` and sends `text`; the reply is still being written on return. */
async function replyBeingWritten(page: Page, user: string, text: string) {
  await signIn(page, user);
  await page.goto("/chat");
  await waitForHydration(page);
  await page.getByTestId("chat-new").click();
  await expect(page).toHaveURL(/conversation=/);
  await waitForHydration(page);
  const input = page.getByTestId("chat-input");
  await input.fill(text);
  await input.press("Enter");
  await expect(page.getByTestId("chat-thinking")).toBeVisible();
  return input;
}

test("a message sent while a reply is written waits in view instead of being refused, and Stop cancels it", async ({ page }) => {
  const input = await replyBeingWritten(page, "customer", "what is your returns policy for unopened items?");

  await input.fill("and is order 4821 still refundable?");
  await input.press("Enter");
  const queued = page.getByTestId("chat-queue").locator("[data-queued]");
  await expect(queued).toHaveCount(1);
  await expect(queued).toHaveAttribute("data-state", "waiting");
  await expect(queued).toContainText("and is order 4821 still refundable?");
  await expect(queued.getByTestId("chat-queue-fate")).toHaveText(/Waiting: the assistant reads it when the current reply is done\./);
  await expect(input).toHaveValue("");

  await page.getByTestId("chat-stop").click();
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0, { timeout: 10_000 });
  await expect(queued).toHaveAttribute("data-state", "cancelled", { timeout: 10_000 });
  await expect(queued.getByTestId("chat-queue-fate")).toHaveText(/Cancelled by Stop/);
  const transcript = page.getByTestId("transcript");
  await expect(transcript.locator(".msg").last()).toHaveText(/Stopped before finishing\./);
  await expect(transcript).not.toContainText("and is order 4821 still refundable?");
  await expect(page.getByTestId("chat-stop")).toBeDisabled();
});

test("Send now stops the reply being written and the new message is answered next", async ({ page }) => {
  const input = await replyBeingWritten(page, "customer2", "what is your returns policy for opened items?");

  await input.fill("forget that: is order 4822 still refundable?");
  await page.getByTestId("chat-send-now").click();
  // The first reply stops at once; the new message is the one being answered now.
  const transcript = page.getByTestId("transcript");
  await expect(transcript.locator(".msg").last()).toHaveText(/Stopped before finishing\./, { timeout: 10_000 });
  await expect(page.locator(".transcript.pending .msg.customer")).toHaveText(/forget that: is order 4822 still refundable\?/, { timeout: 10_000 });
  await expect(page.getByTestId("chat-queue")).toHaveCount(0);

  await page.getByTestId("chat-stop").click();
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0, { timeout: 10_000 });
  const customerLines = transcript.locator(".msg.customer");
  await expect(customerLines).toHaveText([/opened items\?/, /forget that: is order 4822 still refundable\?/]);
});
