import { expect, test } from "@playwright/test";
import { proposeViaApi, signIn, waitForHydration } from "./helpers";

test("above the four-eyes threshold set by an admin, two different approvers are needed", async ({ browser }) => {
  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, "admin");
  await admin.goto("/admin");
  await waitForHydration(admin);
  await expect(admin.getByTestId("users")).toContainText("approver2");
  await admin.getByLabel("Threshold", { exact: true }).fill("10.00");
  await admin.getByRole("button", { name: "Set threshold" }).click();
  await expect(admin.getByText("refunds above 10.00 EUR now need two approvers")).toBeVisible();

  try {
    const customer = await (await browser.newContext()).newPage();
    await signIn(customer, "customer");
    const proposal = await proposeViaApi(customer, "4823");
    expect(proposal.amount_display).toBe("31.50 EUR");

    const first = await (await browser.newContext()).newPage();
    await signIn(first, "approver");
    await first.goto("/queue");
    await waitForHydration(first);
    let card = first.locator(`[data-proposal="${proposal.id}"]`);
    await expect(card.getByTestId("approvals")).toHaveText("needs 2 different approvers, 0 so far");
    await card.getByRole("button", { name: "Approve…" }).click();
    await expect(card.getByTestId("confirm-four-eyes")).toHaveText(
      "This refund needs 2 different approvers. Yours is approval 1 of 2: nothing executes until someone else approves too.",
    );
    await card.getByTestId("confirm-approve").click();
    await expect(first.locator(`[data-decision="${proposal.id}"]`)).toContainText(
      "Refund of 31.50 EUR for order 4823: your approval is recorded; waiting for 1 more approver (not you) before anything is sent.",
    );
    // Approving twice does not make two approvers: the card waits for someone else.
    await first.goto("/queue?tab=waiting");
    await waitForHydration(first);
    card = first.locator(`[data-proposal="${proposal.id}"]`);
    await expect(card.getByTestId("approvals")).toHaveText("needs 2 different approvers, 1 so far");
    await expect(card.getByRole("button", { name: "Approve…" })).toHaveCount(0);

    const second = await (await browser.newContext()).newPage();
    await signIn(second, "approver2");
    await second.goto("/queue");
    await waitForHydration(second);
    card = second.locator(`[data-proposal="${proposal.id}"]`);
    await card.getByRole("button", { name: "Approve…" }).click();
    await expect(card.getByTestId("confirm-four-eyes")).toHaveText("Yours is approval 2 of 2: the refund executes when you confirm.");
    await card.getByTestId("confirm-approve").click();
    // The card leaves the queue as soon as the refund executes; the page keeps the decision.
    await expect(second.locator(`[data-decision="${proposal.id}"]`)).toContainText("Refund of 31.50 EUR for order 4823");
    await second.goto(`/proposals/${proposal.id}`);
    await waitForHydration(second);
    await expect(second.getByTestId("status")).toHaveAttribute("data-status", "verified");
  } finally {
    // Put the demo threshold back for the other tests.
    await admin.getByLabel("Threshold", { exact: true }).fill("500.00");
    await admin.getByRole("button", { name: "Set threshold" }).click();
    await expect(admin.getByText("refunds above 500.00 EUR now need two approvers")).toBeVisible();
  }
});

test("an admin's bad input gets a precise message", async ({ page }) => {
  await signIn(page, "admin");
  await page.goto("/admin");
  await waitForHydration(page);
  await page.getByLabel("Threshold", { exact: true }).fill("12,50");
  await page.getByRole("button", { name: "Set threshold" }).click();
  await expect(page.getByText('"12,50" is not an amount; write it like 79.00')).toBeVisible();
});

test("an admin changes a user's roles, disables and enables them, and uploads a policy file as a new version", async ({ browser }) => {
  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, "admin");
  await admin.goto("/admin");
  await waitForHydration(admin);
  const users = admin.getByTestId("users");

  // A new user, then a role change that takes effect on their next request.
  await admin.getByLabel("User name").first().fill("temp-approver");
  await admin.getByLabel("Display name").fill("Temp Approver");
  await admin.getByLabel("Password (8+ characters)").fill("temp-password-1");
  await admin.getByLabel("Roles (comma-separated)").first().fill("customer");
  await admin.getByRole("button", { name: "Create user" }).click();
  await expect(users.locator("tr", { hasText: "temp-approver" })).toContainText("customer");

  const temp = await (await browser.newContext()).newPage();
  await temp.goto("/login");
  await waitForHydration(temp);
  await temp.getByLabel("User name").fill("temp-approver");
  await temp.getByLabel("Password").fill("temp-password-1");
  await temp.getByRole("button", { name: "Sign in" }).click();
  await expect(temp.getByTestId("signed-in-as")).toBeVisible();
  expect((await temp.request.get("/queue")).status()).toBe(403);

  const roles = admin.getByTestId("roles-form");
  await roles.getByLabel("User name").fill("temp-approver");
  await roles.getByLabel("Roles (comma-separated)").fill("approver, manager");
  await roles.getByRole("button", { name: "Save roles" }).click();
  await expect(roles.getByRole("status")).toHaveText("temp-approver now has the roles approver,manager");
  await expect(users.locator("tr", { hasText: "temp-approver" })).toContainText("approver,manager");
  expect((await temp.request.get("/queue")).status()).toBe(200);

  // Removing one's own admin role is refused, with the reason.
  await roles.getByLabel("User name").fill("admin");
  await roles.getByLabel("Roles (comma-separated)").fill("manager");
  await roles.getByRole("button", { name: "Save roles" }).click();
  await expect(roles.getByRole("alert")).toHaveText("you cannot remove your own admin role; ask another admin");

  // Disabled: signed out everywhere, and back once enabled.
  await admin.getByLabel("User name").nth(2).fill("temp-approver");
  await admin.getByRole("button", { name: "Disable and sign out everywhere" }).click();
  await expect(users.locator("tr", { hasText: "temp-approver" })).toContainText("disabled");
  expect((await temp.request.get("/api/v1/me")).status()).toBe(401);
  await admin.getByLabel("User name").nth(3).fill("temp-approver");
  await admin.getByRole("button", { name: "Enable" }).click();
  await expect(users.locator("tr", { hasText: "temp-approver" })).toContainText("active");

  // A policy file fills the form; uploading it again changed is a new version.
  const upload = async (text: string) => {
    await admin.getByLabel("Markdown file (fills the fields below)").setInputFiles({
      name: "Gift Cards.md",
      mimeType: "text/markdown",
      buffer: Buffer.from(text),
    });
    await expect(admin.getByLabel("Slug")).toHaveValue("gift-cards");
    await expect(admin.getByLabel("Title")).toHaveValue("Gift card policy");
    await expect(admin.getByLabel("Markdown (## headings become citable sections)")).toHaveValue(text);
    await admin.getByRole("button", { name: "Upload as new version" }).click();
  };
  await upload("# Gift card policy\n\n## 1. Refunds\n\nGift cards are not refundable.\n");
  await expect(admin.getByText("created gift-cards (version")).toBeVisible();
  await expect(admin.getByLabel("Slug")).toHaveValue("");
  await upload("# Gift card policy\n\n## 1. Refunds\n\nGift cards are refundable within 14 days.\n");
  await expect(admin.getByText("gift-cards: new version")).toBeVisible();
  const policy = admin.locator('[data-policy="gift-cards"]');
  await expect(policy).toContainText("Gift card policy");
  await expect(policy.getByTestId("earlier-versions")).toContainText("earlier:");
});
