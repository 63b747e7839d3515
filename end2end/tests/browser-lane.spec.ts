import { APIRequestContext, Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { openQueue, rejectAs, signIn, waitForHydration } from "./helpers";

// The browser lane: order 4824 is "shipped" in the shop's records, so the
// refund specialist reads the sandbox carrier's tracking page in the
// server's own headless Chromium. The sandbox carrier can hold its pages,
// which catches the browser in the middle of a read.

const control = "/sandbox/carrier/control";

async function holdCarrierPages(request: APIRequestContext, held: boolean) {
  const response = await request.put(control, { data: { held } });
  expect(response.status()).toBe(200);
}

async function pagesBeingRead(request: APIRequestContext): Promise<number> {
  return (await (await request.get(control)).json()).answering;
}

async function chatAs(page: Page, user: string) {
  await signIn(page, user);
  await page.goto("/chat");
  await waitForHydration(page);
}

async function send(page: Page, text: string) {
  const input = page.getByTestId("chat-input");
  await input.fill(text);
  await input.press("Enter");
}

test.afterEach(async ({ request }) => {
  await holdCarrierPages(request, false);
});

test("a customer is told the carrier's page is being read, and Stop during the read lands at once", async ({ page, request }) => {
  await chatAs(page, "customer2");
  await holdCarrierPages(request, true);
  await send(page, "I want to return my head lamp, order 4824");
  await expect(page.getByTestId("chat-thinking")).toBeVisible();
  // The browser has the carrier's page open and waits for it.
  await expect.poll(() => pagesBeingRead(request), { timeout: 20_000 }).toBe(1);
  // The customer is told what the wait is, not only that a reply is coming.
  await expect(page.getByTestId("chat-thinking")).toHaveText(/Checking the carrier's tracking page/);
  await expect(page.getByTestId("chat-stop")).toBeEnabled();

  await page.getByTestId("chat-stop").click();
  // The held page would hold the read for the browser's 20 s limit: done
  // within 10 s, and with Stop's note, is Stop landing during the read (no
  // stopwatch on a shared machine).
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0, { timeout: 10_000 });
  await expect(page.getByTestId("transcript").locator(".msg").last()).toHaveText(/Stopped before finishing\./);
  await expect(page.getByTestId("chat-stop")).toBeDisabled();
  await page.screenshot({ path: test.info().outputPath("browser-lane-stopped.png"), fullPage: true });
});

test("the approver sees the carrier's page, its address, time and hash, and its screenshot next to the citation", async ({ page, browser, request }) => {
  // An earlier test may have left a proposal of 4824 waiting; the chat
  // follows a live one instead of proposing again.
  const approver = await openQueue(browser, "approver");
  const live = await approver.request.get("/api/v1/proposals?order_id=4824&status=awaiting_approval");
  for (const proposal of await live.json()) {
    await rejectAs(browser, "approver2", proposal.id, "Left by an earlier end-to-end test.");
  }

  await chatAs(page, "customer2");
  await send(page, "I want to return my head lamp, order 4824");
  const reply = page.getByTestId("transcript").locator(".msg.agent").last();
  await expect(reply).toContainText("was the item opened", { timeout: 30_000 });
  await expect(reply).toContainText("tracking page");
  await send(page, "No, it is still sealed");
  await expect(page.getByTestId("transcript").locator(".msg.agent").last()).toContainText("waiting for approval", { timeout: 30_000 });

  const proposals = await (await approver.request.get("/api/v1/proposals?order_id=4824&status=awaiting_approval")).json();
  expect(proposals).toHaveLength(1);
  const card = approver.locator(`[data-proposal="${proposals[0].id}"]`);
  await expect(card).toBeVisible({ timeout: 15_000 });
  await card.locator("details.evidence > summary").click();
  const citation = card.locator('li[data-reference^="browser-check:"]');
  await expect(citation).toContainText("Carrier tracking page for order 4824");
  await expect(citation).toContainText("/sandbox/carrier/track/PW4824DE");
  await expect(citation).toContainText("screenshot SHA-256");
  await expect(citation).toContainText("status: delivered; delivered on");
  const link = citation.getByTestId("evidence-screenshot");
  const href = await link.getAttribute("href");
  const shot = await approver.request.get(href ?? "");
  expect(shot.status()).toBe(200);
  expect(shot.headers()["content-type"]).toBe("image/png");
  expect(await citation.textContent()).toContain(shot.headers()["x-content-sha256"]);
  await approver.screenshot({ path: test.info().outputPath("browser-lane-evidence.png"), fullPage: true });
});
