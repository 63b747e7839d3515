import { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { createPrivateKey, randomUUID, sign } from "node:crypto";
import { hostSitePort } from "../playwright.config";
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

test("in the widget, Talk to a person puts the chat in the inbox and the person's reply appears live under their name", async ({ browser, baseURL }) => {
  // Its own origin for the same host page (localhost, not 127.0.0.1): the
  // widget tests register theirs, and an origin is registered once.
  const hostOrigin = `http://localhost:${hostSitePort}`;
  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, "admin");
  await admin.goto("/admin");
  await waitForHydration(admin);
  const sites = admin.getByTestId("widget-sites");
  await sites.getByLabel("Name").fill("Handover shop");
  await sites.getByLabel("Origin (scheme, host and port)").fill(hostOrigin);
  await sites.getByRole("button", { name: "Register site" }).click();
  const shown = sites.getByTestId("widget-new-key").last();
  await expect(shown).toBeVisible();
  const siteId = (await shown.getByTestId("widget-site-id").textContent())!.trim();
  const keyId = (await shown.getByTestId("widget-key-id").textContent())!.trim();
  const pem = (await shown.getByTestId("widget-private-key").inputValue()).trim();
  const row = admin.locator(`[data-site="${siteId}"]`);
  await row.getByLabel("Customer to allow").fill("customer2");
  await row.getByRole("button", { name: "Allow customer" }).click();
  await expect(row.getByTestId("widget-site-customers")).toContainText("customer2");
  const me = await (await (async () => {
    const page = await (await browser.newContext()).newPage();
    await signIn(page, "customer2");
    return page.request.get("/api/v1/me");
  })()).json();

  const b64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");
  const iat = Math.floor(Date.now() / 1000);
  const header = b64url(JSON.stringify({ alg: "EdDSA", typ: "JWT", kid: keyId }));
  const claims = b64url(JSON.stringify({ iss: siteId, sub: me.id, aud: "countersign-widget", iat, exp: iat + 300, jti: randomUUID() }));
  const token = `${header}.${claims}.${b64url(sign(null, Buffer.from(`${header}.${claims}`), createPrivateKey(pem)))}`;

  const host = await (await browser.newContext()).newPage();
  await host.goto(`${hostOrigin}/#${new URLSearchParams({ countersign: baseURL!, site: siteId, token })}`);
  await host.getByRole("button", { name: "Chat with us" }).click();
  const frame = host.frameLocator("#countersign-widget-frame");
  await expect(frame.locator("#who")).toHaveText("Signed in as Cas Customer");
  await frame.getByRole("button", { name: "Talk to a person" }).click();
  await expect(frame.locator(".message.note").last()).toContainText("I've asked a member of our team to join this conversation");

  const staff = await (await browser.newContext()).newPage();
  await signIn(staff, "approver");
  await staff.goto("/inbox");
  await waitForHydration(staff);
  const entry = staff.locator('[data-testid="inbox-entry"]').filter({ hasText: "Cas Customer" }).filter({ has: staff.getByTestId("inbox-take-over") });
  await entry.first().getByTestId("inbox-take-over").click();
  const mine = staff.locator('[data-testid="inbox-entry"]').filter({ has: staff.getByTestId("inbox-reply-text") });
  await mine.getByTestId("inbox-reply-text").fill("Hi Cas, Ada here.");
  await mine.getByTestId("inbox-reply-send").click();

  const reply = frame.locator(".message.person").last();
  await expect(reply.locator(".speaker")).toHaveText("Ada Approver");
  await expect(reply.locator(".text")).toHaveText("Hi Cas, Ada here.");
  await mine.getByTestId("inbox-hand-back").click();
  await expect(frame.locator(".message.note").last()).toContainText("handed the conversation back");
});
