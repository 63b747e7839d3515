import { Browser, expect, Locator, Page } from "@playwright/test";
import AxeBuilder from "@axe-core/playwright";
import { demoPassword, sandboxKey } from "../playwright.config";

/** The header every request to the mounted sandbox provider needs. */
export const sandboxAuth = { authorization: `Bearer ${sandboxKey}` };

/** Waits until the wasm has hydrated the page (set by the App component). */
export async function waitForHydration(page: Page) {
  await expect(page.locator("body")).toHaveAttribute("data-hydrated", "true");
}

/** Signs in through the real login page and waits for the landing page. */
export async function signIn(page: Page, user: string) {
  await page.goto("/login");
  await waitForHydration(page);
  await page.getByLabel("User name").fill(user);
  await page.getByLabel("Password").fill(demoPassword);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
  await waitForHydration(page);
}

/**
 * Proposes a refund of `orderId` through the JSON API as the outside agent
 * (the demo's `agent` service account, signed in in a context of its own):
 * customers do not propose through the API, they ask in the chat. `page`
 * is any page of the test; its browser opens the agent's context. `extra`
 * adds fields to the body (`lines`, `open_questions`, `supersedes`).
 *
 * One live proposal per order and request: an earlier test may have left a
 * proposal awaiting approval on the same order, which the new one would
 * overlap (409 naming it). Those are rejected first, as a second approver
 * would, so every test starts from the order it names.
 */
export async function proposeViaApi(
  page: Page,
  orderId: string,
  section = "returns-policy:section-3",
  extra: Record<string, unknown> = {},
) {
  const browser = page.context().browser();
  if (!browser) throw new Error("the page has no browser to open the agent's context in");
  const agent = await (await browser.newContext()).newPage();
  await signIn(agent, "agent");
  const csrf = await agent.locator('meta[name="csrf-token"]').getAttribute("content");
  const propose = () =>
    agent.request.post("/api/v1/proposals", {
      headers: { "x-csrf-token": csrf ?? "", origin: new URL(agent.url()).origin },
      data: {
        order_id: orderId,
        evidence: [{ reference: `order:${orderId}` }, { reference: section }],
        recommendation: "Refund under the cited policy section.",
        ...extra,
      },
    });
  let response = await propose();
  if (response.status() === 409) {
    const message: string = (await response.json()).error.message;
    const live = [...message.matchAll(/(prp_[0-9a-f]+) awaiting_approval/g)].map((m) => m[1]);
    for (const id of live) {
      await rejectAs(browser, "approver2", id, "Left by an earlier end-to-end test.");
    }
    response = await propose();
  }
  expect(response.status()).toBe(201);
  const proposal = await response.json();
  await agent.context().close();
  return proposal;
}

/**
 * Starts recording every status the element matching `selector` shows,
 * however briefly: a MutationObserver in the page notes each change of its
 * `data-status`. Read the record with {@link statusesShown}.
 */
export async function recordStatuses(page: Page, selector: string) {
  await page.evaluate((selector) => {
    const seen: string[] = [];
    const note = () => {
      const status = document.querySelector(selector)?.getAttribute("data-status");
      if (status && seen[seen.length - 1] !== status) seen.push(status);
    };
    note();
    new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-status"] });
    (window as unknown as { __statuses: Record<string, string[]> }).__statuses ??= {};
    (window as unknown as { __statuses: Record<string, string[]> }).__statuses[selector] = seen;
  }, selector);
}

/** The statuses recorded by {@link recordStatuses}, in the order shown. */
export async function statusesShown(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((selector) => (window as unknown as { __statuses: Record<string, string[]> }).__statuses[selector], selector);
}

/**
 * Slows the sandbox provider for one proposal, so that each state a refund
 * passes through stays on screen long enough to be seen: the refund call and
 * the status lookups of verification each take `ms`. `clearProviderDelays`
 * puts it back.
 */
export async function slowProvider(page: Page, proposalId: string, ms: number) {
  const response = await page.request.put("/sandbox/payments/v1/faults", {
    headers: sandboxAuth,
    data: { faults: [{ mode: { latency: { ms } }, key_prefix: proposalId }], lookup_latency_ms: ms },
  });
  expect(response.status()).toBe(200);
}

export async function clearProviderDelays(page: Page) {
  const response = await page.request.put("/sandbox/payments/v1/faults", {
    headers: sandboxAuth,
    data: { faults: [], lookup_latency_ms: 0 },
  });
  expect(response.status()).toBe(200);
}

/** Rejects a proposal through the JSON API, as `user` in a context of its own. */
export async function rejectAs(browser: Browser, user: string, proposalId: string, reason: string) {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, user);
  const csrf = await page.locator('meta[name="csrf-token"]').getAttribute("content");
  const response = await page.request.post(`/api/v1/proposals/${proposalId}/reject`, {
    headers: { "x-csrf-token": csrf ?? "", origin: new URL(page.url()).origin },
    data: { reason },
  });
  expect(response.status()).toBe(200);
  await page.context().close();
}

/** Signs `user` in, in a context of its own, and opens the review queue with its live connection open. */
export async function openQueue(browser: Browser, user: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, user);
  await page.goto("/queue");
  await waitForHydration(page);
  await expect(page.locator("body")).toHaveAttribute("data-live", "open");
  return page;
}

/**
 * Runs axe-core (WCAG 2.1 A and AA rules and axe's best practices) over the
 * page as it is now, frames included, and fails on any serious or critical
 * violation, naming each rule and the elements it found.
 */
export async function expectNoSeriousA11yViolations(page: Page) {
  const results = await new AxeBuilder({ page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"])
    .analyze();
  const serious = results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(serious, `axe on ${page.url()}`).toEqual([]);
}

/**
 * Sets `user`'s approval limit in EUR from their row on /admin (the page is
 * open, signed in as an admin) and waits for the confirmation.
 */
export async function setApprovalLimit(admin: Page, user: string, amount: string) {
  const row = admin.getByTestId("users").locator(`tr[data-user="${user}"]`);
  await openDisclosure(row.locator("details", { hasText: "Limit…" }));
  await row.getByLabel(`Approval limit for ${user}`).fill(amount);
  await row.getByRole("button", { name: "Set limit" }).click();
  await expect(admin.getByText(`${user} may now approve up to ${amount} EUR`)).toBeVisible();
  // The table is redrawn with the new limit (which closes the row's forms).
  await expect(row).toContainText(`${amount} EUR`);
}

/**
 * Opens a `<details>` by clicking its summary, unless it is open already
 * (a redrawn table keeps what its rows' disclosures were).
 */
export async function openDisclosure(details: Locator) {
  if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open))) {
    await details.locator("summary").click();
  }
  await expect(details).toHaveAttribute("open", "");
}

/** The two screens every page is checked on. */
export const sizes = [
  { name: "desktop", viewport: { width: 1366, height: 768 } },
  { name: "phone", viewport: { width: 390, height: 844 } },
] as const;

/** A page in a context of its own at `viewport`, signed in as `user` (or nobody). */
export async function pageAs(
  browser: Browser,
  user: string | null,
  viewport: { width: number; height: number } = sizes[0].viewport,
): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  if (user) await signIn(page, user);
  return page;
}

/** The admin's session calls the shop API (orders and refunds booked elsewhere). */
export async function shopCall(admin: Page, method: "put" | "post", path: string, data: unknown) {
  const csrf = await admin.locator('meta[name="csrf-token"]').getAttribute("content");
  const response = await admin.request[method](path, {
    headers: { "x-csrf-token": csrf ?? "", origin: new URL(admin.url()).origin },
    data,
  });
  expect(response.status(), await response.text()).toBeLessThan(300);
  return response.json();
}

/**
 * A fresh order of customer3's (129.00 EUR unless said), delivered
 * `deliveredDaysAgo` days ago and paid at the sandbox provider: the demo
 * orders stay as the other specs expect them. `admin` is signed in as an
 * admin (the shop API takes an admin's session).
 */
export async function freshOrder(admin: Page, id: string, deliveredDaysAgo: number, amountMinor = 12900) {
  const day = 24 * 3600 * 1000;
  const charge = await admin.request.post("/sandbox/payments/v1/charges", {
    headers: sandboxAuth,
    data: { id: `pay_${id}`, amount_minor: amountMinor, currency: "EUR" },
  });
  expect(charge.status()).toBe(200);
  await shopCall(admin, "put", `/api/v1/orders/${id}`, {
    source_version: 1,
    customer: "customer3",
    placed_at: new Date(Date.now() - (deliveredDaysAgo + 3) * day).toISOString(),
    currency: "EUR",
    lines: [{ sku: "TENT-2P", description: "Two-person tent", quantity: 1, unit_price_minor: amountMinor }],
    total_minor: amountMinor,
    payment_reference: `pay_${id}`,
    events: [{ kind: "delivered", at: new Date(Date.now() - deliveredDaysAgo * day).toISOString() }],
  });
}
