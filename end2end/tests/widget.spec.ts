import { Browser, FrameLocator, Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { createPrivateKey, randomUUID, sign } from "node:crypto";
import { hostSitePort, slowChatPort } from "../playwright.config";
import { openDisclosure, signIn, waitForHydration } from "./helpers";

// The widget on a static host page served from its own origin. An admin
// registers that origin in /admin and gets the site's private key; this file
// then plays the host site's server, signing a short-lived token per visit.

const hostOrigin = `http://127.0.0.1:${hostSitePort}`;

type SiteKey = { siteId: string; keyId: string; pem: string };
let site: SiteKey;
let otherSite: SiteKey;
const customerIds: Record<string, string> = {};

function b64url(value: string | Buffer) {
  return Buffer.from(value).toString("base64url");
}

/** What a host site's server does: an EdDSA JWT naming its customer. */
function hostToken(key: SiteKey, sub: string, opts: { issuedSecondsAgo?: number; lifetime?: number } = {}) {
  const iat = Math.floor(Date.now() / 1000) - (opts.issuedSecondsAgo ?? 0);
  const header = b64url(JSON.stringify({ alg: "EdDSA", typ: "JWT", kid: key.keyId }));
  const claims = b64url(
    JSON.stringify({ iss: key.siteId, sub, aud: "countersign-widget", iat, exp: iat + (opts.lifetime ?? 300), jti: randomUUID() }),
  );
  const signature = sign(null, Buffer.from(`${header}.${claims}`), createPrivateKey(key.pem));
  return `${header}.${claims}.${b64url(signature)}`;
}

/** Opens the host page with the widget for `token` and opens the chat. */
async function openWidget(page: Page, baseURL: string, key: SiteKey, token: string): Promise<FrameLocator> {
  const fragment = new URLSearchParams({ countersign: baseURL, site: key.siteId, token });
  // A fresh document each time: changing only the fragment would not reload the page.
  await page.goto("about:blank");
  await page.goto(`${hostOrigin}/#${fragment}`);
  const launcher = page.getByRole("button", { name: "Chat with us" });
  await expect(launcher).toHaveAttribute("aria-expanded", "false");
  await launcher.click();
  await expect(launcher).toHaveAttribute("aria-expanded", "true");
  return page.frameLocator("#countersign-widget-frame");
}

/** Sends a message and waits until the turn's transcript is shown. */
async function say(frame: FrameLocator, text: string) {
  const before = await frame.locator(".message.user").count();
  await frame.getByLabel("Your message").fill(text);
  await frame.getByLabel("Your message").press("Enter");
  await expect(frame.locator("#status")).not.toHaveText("Working on it…", { timeout: 30_000 });
  await expect(frame.getByRole("button", { name: "Send", exact: true })).toBeEnabled();
  await expect(frame.locator(".message.user")).toHaveCount(before + 1);
  await expect(frame.getByLabel("Your message")).toHaveValue("");
}

async function registerSite(page: Page, name: string, origin: string): Promise<SiteKey> {
  const section = page.getByTestId("widget-sites");
  await section.getByLabel("Name").fill(name);
  await section.getByLabel("Origin (scheme, host and port)").fill(origin);
  // The notice of an earlier registration stays until this one's arrives.
  const earlier = await section.getByTestId("widget-site-id").allTextContents();
  await section.getByRole("button", { name: "Register site" }).click();
  const shown = section.getByTestId("widget-new-key").last();
  await expect(shown).toBeVisible();
  await expect(async () => {
    const id = (await shown.getByTestId("widget-site-id").textContent())!.trim();
    expect(earlier.map((t) => t.trim())).not.toContain(id);
  }).toPass();
  return {
    siteId: (await shown.getByTestId("widget-site-id").textContent())!.trim(),
    keyId: (await shown.getByTestId("widget-key-id").textContent())!.trim(),
    pem: (await shown.getByTestId("widget-private-key").inputValue()).trim(),
  };
}

/** Lets the site sign in these customers, from its row on the admin page. */
async function allowCustomers(page: Page, key: SiteKey, names: string[]) {
  const row = page.locator(`[data-site="${key.siteId}"]`);
  for (const name of names) {
    await row.getByLabel("Customer to allow").fill(name);
    await row.getByRole("button", { name: "Allow customer" }).click();
    await expect(row.getByTestId("widget-site-customers")).toContainText(name);
  }
}

async function userId(browser: Browser, name: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, name);
  const me = await (await page.request.get("/api/v1/me")).json();
  await context.close();
  return me.id as string;
}

test.describe.serial("the embeddable widget", () => {
  test("an admin registers the host site and gets its signing key once", async ({ page, browser }) => {
    await signIn(page, "admin");
    await page.goto("/admin");
    await waitForHydration(page);
    site = await registerSite(page, "Trailhead Outfitters", hostOrigin);
    expect(site.siteId).toMatch(/^wst_/);
    expect(site.keyId).toMatch(/^wsk_/);
    expect(site.pem).toContain("BEGIN PRIVATE KEY");
    await expect(page.locator(`[data-site="${site.siteId}"]`)).toContainText(hostOrigin);
    // A second, unrelated site: its key must not open sessions on the first.
    otherSite = await registerSite(page, "Someone else", "https://other-shop.example");
    // The same origin twice is refused with a reason.
    const section = page.getByTestId("widget-sites");
    await section.getByLabel("Name").fill("Duplicate");
    await section.getByLabel("Origin (scheme, host and port)").fill(`${hostOrigin}/`);
    await section.getByRole("button", { name: "Register site" }).click();
    await expect(section.getByRole("alert")).toContainText(`the origin ${hostOrigin} is already registered`);
    // A new site signs in nobody until an admin allows its customers.
    await expect(page.locator(`[data-site="${site.siteId}"]`).getByTestId("widget-site-customers")).toContainText(
      "Signs in no customer yet",
    );
    await allowCustomers(page, site, ["customer", "customer3"]);

    // The private key can be downloaded as a file; revoking a key first
    // says what it does.
    const retired = await registerSite(page, "Retired shop", "https://retired-shop.example");
    const download = page.getByTestId("widget-key-download").last();
    await expect(download).toHaveAttribute("download", `${retired.siteId}-${retired.keyId}.pem`);
    const href = (await download.getAttribute("href"))!;
    const downloaded = decodeURIComponent(href.replace("data:application/x-pem-file;charset=utf-8,", ""));
    // The key's PEM has CRLF line ends; the text field shows them as LF.
    expect(downloaded.replace(/\r\n/g, "\n").trim()).toBe(retired.pem);
    const key = page.locator(`[data-site="${retired.siteId}"] [data-key="${retired.keyId}"]`);
    await openDisclosure(key.locator("details"));
    await expect(key).toContainText(`Sign-ins with tokens signed by ${retired.keyId} are refused from then on.`);
    await key.getByRole("button", { name: `Revoke ${retired.keyId}` }).click();
    await expect(page.locator(`[data-site="${retired.siteId}"] [data-key="${retired.keyId}"]`)).toContainText("revoked");
    await page.screenshot({ path: test.info().outputPath("admin-widget-sites.png"), fullPage: true });

    for (const name of ["customer", "customer3", "approver"]) customerIds[name] = await userId(browser, name);
  });

  test("with a valid token the customer chats in the widget, sees only their orders, and watches the refund verify live", async ({ browser, baseURL }) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const frame = await openWidget(page, baseURL!, site, hostToken(site, customerIds.customer3));
    await expect(frame.locator("#who")).toHaveText("Signed in as Kit Customer");
    // A new chat greets with examples; choosing one fills the field.
    const greeting = frame.getByTestId("greeting");
    await expect(greeting).toContainText("Ask about one of your orders or our policies. For example:");
    await greeting.getByRole("button", { name: "Where is my refund?" }).click();
    await expect(frame.locator("#text")).toHaveValue("Where is my refund?");
    await frame.locator("#text").fill("");

    // Order 4821 is another customer's: it is not on this account.
    await say(frame, "please refund order 4821");
    await expect(frame.locator(".message.assistant").last()).toContainText("I can't find an order 4821 on your account");

    await say(frame, "I'd like a refund for order 4831");
    const question = frame.locator('.message.assistant[data-agent="refund_specialist"]').last();
    await expect(question.locator(".speaker")).toHaveText("Refund specialist");
    // Citations read as plain words, without their [order:4831] tags.
    await expect(question).toContainText("delivered");
    await expect(question).not.toContainText("[order:");
    await expect(question).toContainText("was the item opened?");
    await say(frame, "no, it is still sealed");
    const card = frame.locator("[data-proposal]");
    await expect(card).toHaveCount(1);
    await expect(card).toContainText("Refund of 24.00 EUR for order 4831");
    await expect(card.locator(".status")).toHaveText("Awaiting approval");
    const proposalId = await card.getAttribute("data-proposal");
    await page.screenshot({ path: test.info().outputPath("widget-awaiting-approval.png"), fullPage: true });

    // An approver approves in Countersign; the widget follows without reload.
    const approverContext = await browser.newContext();
    const approver = await approverContext.newPage();
    await signIn(approver, "approver");
    const detail = await (await approver.request.get(`/api/v1/proposals/${proposalId}`)).json();
    const csrf = await approver.locator('meta[name="csrf-token"]').getAttribute("content");
    const approved = await approver.request.post(`/api/v1/proposals/${proposalId}/approve`, {
      headers: { "x-csrf-token": csrf ?? "", origin: baseURL! },
      data: { action_digest: detail.proposal.action_digest },
    });
    expect(approved.status()).toBe(200);
    await expect(card.locator(".status")).toHaveAttribute("data-status", "verified");
    await expect(card.locator(".status")).toHaveText("Refunded and verified");
    await page.screenshot({ path: test.info().outputPath("widget-verified.png"), fullPage: true });

    // Reloading the host page resumes the same conversation.
    await page.reload();
    await page.getByRole("button", { name: "Chat with us" }).click();
    await expect(frame.locator("[data-proposal]")).toHaveAttribute("data-proposal", proposalId!);
    await expect(frame.locator(".message.user").first()).toHaveText(/please refund order 4821/);
  });

  test("a chat message containing <script> renders as text in the widget, and Escape closes it", async ({ browser, baseURL }) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const frame = await openWidget(page, baseURL!, site, hostToken(site, customerIds.customer));
    await expect(frame.locator("#who")).toHaveText("Signed in as Cora Customer");
    const hostile = `<script>window.__widgetPwned = 1</script><img src=x onerror="window.__widgetPwned = 2"> hello`;
    await say(frame, hostile);
    await expect(frame.locator(".message.user").last().locator(".text")).toHaveText(hostile);
    await expect(frame.locator(".message script, .message img")).toHaveCount(0);
    const iframe = page.frame({ url: /\/widget\/frame/ })!;
    expect(await iframe.evaluate(() => (window as unknown as { __widgetPwned?: number }).__widgetPwned)).toBeUndefined();

    // Escape closes the chat and gives focus back to the launcher.
    await frame.getByLabel("Your message").press("Escape");
    const launcher = page.getByRole("button", { name: "Chat with us" });
    await expect(launcher).toHaveAttribute("aria-expanded", "false");
    await expect(launcher).toBeFocused();
    await expect(page.locator("#countersign-widget-frame")).toBeHidden();
  });

  test("an expired token, a token for a staff account or another site's key opens nothing and says why", async ({ browser, baseURL }) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cases: [string, RegExp][] = [
      [hostToken(site, customerIds.customer, { issuedSecondsAgo: 900, lifetime: 300 }), /the sign-in token has expired/],
      [hostToken(site, customerIds.approver), /names no customer this site may sign in/],
      [hostToken({ ...otherSite, siteId: site.siteId }), /signed with a key this site does not have/],
    ];
    for (const [token, message] of cases) {
      const frame = await openWidget(page, baseURL!, site, token);
      const status = frame.getByRole("alert");
      await expect(status).toContainText("The chat could not sign you in");
      await expect(status).toContainText(message);
      await expect(frame.getByLabel("Your message")).toBeHidden();
      await expect(frame.locator("#who")).toHaveText("");
    }
    await page.screenshot({ path: test.info().outputPath("widget-refused.png"), fullPage: true });
  });

  test("only the registered origin may frame the chat", async ({ page, baseURL }) => {
    // The frame's own policy names the host origin and nothing else.
    const response = await page.request.get(`${baseURL}/widget/frame?site=${site.siteId}`);
    expect(response.headers()["content-security-policy"]).toContain(`frame-ancestors ${hostOrigin}`);
    // Framed by a page on Countersign's own origin (not registered), the
    // browser refuses to load it: the iframe never holds the widget page.
    await signIn(page, "customer");
    const framed = await page.evaluate(
      (src) =>
        new Promise<string | null>((resolve) => {
          const frame = document.createElement("iframe");
          frame.addEventListener("load", () => {
            try {
              resolve(frame.contentDocument?.body?.getAttribute("data-site") ?? null);
            } catch {
              resolve("cross-origin error page");
            }
          });
          frame.src = src;
          document.body.appendChild(frame);
        }),
      `/widget/frame?site=${site.siteId}`,
    );
    expect(framed).not.toBe(site.siteId);
  });
});

test.describe.serial("the widget with a model that takes its time", () => {
  // The second server, whose scripted model takes 30 s per reply.
  const slowBase = `http://127.0.0.1:${slowChatPort}`;

  test("Stop ends a reply being written, and after a reload the widget follows the running turn until Stop", async ({ browser }) => {
    const admin = await (await browser.newContext({ baseURL: slowBase })).newPage();
    await signIn(admin, "admin");
    await admin.goto("/admin");
    await waitForHydration(admin);
    const slowSite = await registerSite(admin, "Trailhead Outfitters (slow model)", hostOrigin);
    await allowCustomers(admin, slowSite, ["customer"]);
    const customer = await (await browser.newContext({ baseURL: slowBase })).newPage();
    await signIn(customer, "customer");
    const customerId = (await (await customer.request.get("/api/v1/me")).json()).id as string;

    const page = await (await browser.newContext()).newPage();
    const frame = await openWidget(page, slowBase, slowSite, hostToken(slowSite, customerId));
    await expect(frame.locator("#who")).toHaveText("Signed in as Cora Customer");
    const [input, send, stop] = [
      frame.getByLabel("Your message"),
      frame.locator("#send"),
      frame.getByRole("button", { name: "Stop" }),
    ];

    // Stop while this frame waits for the reply; a message sent meanwhile
    // waits in view, and Stop cancels it too.
    await input.fill("what is your returns policy?");
    await input.press("Enter");
    await expect(frame.locator("#status")).toHaveText("Working on it…");
    await expect(send).toHaveText("Send (after this reply)");
    await expect(frame.getByRole("button", { name: "Send now" })).toBeVisible();
    await expect(frame.getByRole("button", { name: "Add to this reply" })).toBeVisible();
    await input.fill("and is order 4821 still refundable?");
    await input.press("Enter");
    const queued = frame.locator("[data-queued]");
    await expect(queued).toHaveAttribute("data-queued", "waiting");
    await expect(queued.locator(".fate")).toHaveText("Waiting: read when the current reply is done.");
    await stop.click();
    await expect(frame.locator("#status")).toHaveText("Stopped.", { timeout: 10_000 });
    await expect(frame.locator(".message.assistant").last()).toHaveText(/Stopped before finishing\./);
    await expect(queued).toHaveAttribute("data-queued", "cancelled", { timeout: 10_000 });
    await expect(queued.locator(".fate")).toHaveText("Cancelled by Stop: not sent to the assistant.");
    await expect(send).toHaveText("Send");
    await expect(stop).toBeHidden();

    // Reloaded mid-reply: the frame shows what is being answered and follows the turn.
    await input.fill("and for opened items?");
    await input.press("Enter");
    await expect(frame.locator("#status")).toHaveText("Working on it…");
    await page.reload();
    await page.getByRole("button", { name: "Chat with us" }).click();
    await expect(frame.locator(".message.user:not([data-queued])").last()).toHaveText(/and for opened items\?/);
    await expect(frame.locator("#status")).toHaveText("Working on it…");
    await expect(send).toHaveText("Send (after this reply)");
    await stop.click();
    await expect(frame.locator(".message.assistant").last()).toHaveText(/Stopped before finishing\./, { timeout: 10_000 });
    await expect(frame.locator(".message.user:not([data-queued])")).toHaveCount(2);
    await expect(send).toHaveText("Send");
    await expect(stop).toBeHidden();
  });
});
