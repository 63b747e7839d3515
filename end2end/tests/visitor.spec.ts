import { Browser, Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { demoPassword } from "../playwright.config";
import { waitForHydration } from "./helpers";

// The seed's opening scene: a visitor chats before signing in; the agent
// needs their orders, asks them to sign in and waits inside the turn.

async function visitorAskedToSignIn(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto("/chat");
  await waitForHydration(page);
  const input = page.getByTestId("chat-input");
  await input.fill("where is my refund?");
  await input.press("Enter");
  await expect(page.getByTestId("chat-sign-in")).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId("chat-sign-in")).toContainText("I need you to sign in");
  await expect(page.getByTestId("chat-stop")).toBeEnabled();
  return page;
}

test("a visitor asked to sign in signs in in another tab and gets the reply in the tab that asked", async ({ browser }) => {
  const page = await visitorAskedToSignIn(browser);
  const [tab] = await Promise.all([
    page.context().waitForEvent("page"),
    page.getByTestId("chat-sign-in-link").click(),
  ]);
  await waitForHydration(tab);
  await tab.getByLabel("User name").fill("customer3");
  await tab.getByLabel("Password").fill(demoPassword);
  await tab.getByRole("button", { name: "Sign in" }).click();
  await expect(tab.getByTestId("signed-in-as")).toBeVisible();

  // The first tab: the same turn went on as Kit, and the page now speaks
  // for her (reloaded once the reply was in).
  await expect(page.getByTestId("signed-in-as")).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId("chat-sign-in")).toHaveCount(0);
  const transcript = page.getByTestId("transcript");
  await expect(transcript.locator(".msg.customer").last()).toHaveText(/where is my refund\?/);
  const reply = transcript.locator(".msg.agent").last();
  await expect(reply).toBeVisible();
  await expect(reply).not.toContainText("sign in");
  await expect(page.getByTestId("chat-stop")).toBeDisabled();
});

test("Stop while the agent waits for a visitor to sign in ends the wait at once", async ({ browser }) => {
  const page = await visitorAskedToSignIn(browser);
  await page.getByTestId("chat-stop").click();
  // The wait would otherwise last 10 minutes: gone within 10 s is Stop
  // ending it, not the wait running out (no stopwatch on a shared machine).
  await expect(page.getByTestId("chat-sign-in")).toHaveCount(0, { timeout: 10_000 });
  await expect(page.getByTestId("chat-thinking")).toHaveCount(0);
  await expect(page.getByTestId("transcript").locator(".msg").last()).toHaveText(/Stopped before finishing\./);
  // Still a visitor: nothing was bound to anyone.
  await expect(page.getByTestId("signed-in-as")).toHaveCount(0);
});
