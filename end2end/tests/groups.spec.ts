import { expect, test } from "@playwright/test";
import { supportGroupPort } from "../playwright.config";
import { signIn, waitForHydration } from "./helpers";

// Against the two agent groups of scripts/groups.sh: the support group's
// refund specialist asks the returns desk (the other group, its own
// database and key) over the gateway before asking the customer.
test.use({ baseURL: `http://127.0.0.1:${supportGroupPort}` });

test("the review queue shows the returns desk's signed answer as evidence, with where it came from", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer");
  await customer.goto("/chat");
  await waitForHydration(customer);
  const input = customer.getByTestId("chat-input");
  await input.fill("check order 4821 and refund it if it qualifies");
  await input.press("Enter");
  await expect(customer.getByTestId("chat-thinking")).toHaveCount(0, { timeout: 30_000 });
  const reply = customer.getByTestId("transcript").locator(".msg.agent").last();
  // The desk had the parcel on record as sealed: no question to the customer.
  await expect(reply).toContainText("I have prepared refund proposal");
  await expect(reply).not.toContainText("was the item opened?");

  const approver = await (await browser.newContext()).newPage();
  await signIn(approver, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);
  const card = approver.locator("[data-proposal]").filter({ hasText: "Refund 79.00 EUR for order 4821" });
  await expect(card).toHaveCount(1);
  await card.getByText(/Evidence \(3 citations\)/).click();
  const answer = card.locator('[data-reference^="peer-task:"]');
  await expect(answer).toContainText("returns.inspection answered by agent group returns");
  await expect(answer).toContainText("signed by returns/gateway/v1");
  await expect(answer).toContainText("signature verified");
  await expect(answer).toContainText("signed answer");
  await expect(answer.locator("blockquote")).toContainText("condition: sealed");
  await expect(card.locator(".recommendation")).toContainText("the returns desk (agent group returns) recorded the returned parcel as sealed");
});
