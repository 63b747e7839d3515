import { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { openDisclosure, pageAs, proposeViaApi, setApprovalLimit, signIn, sizes, waitForHydration } from "./helpers";

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

/** Creates a customer account through /admin's form (the page is open, signed in as an admin). */
async function createCustomer(admin: Page, name: string, displayName: string, password: string) {
  await admin.getByLabel("User name").first().fill(name);
  await admin.getByLabel("Display name").fill(displayName);
  await admin.getByLabel("Password (8+ characters)").fill(password);
  await admin.getByLabel("Roles (comma-separated)").first().fill("customer");
  await admin.getByRole("button", { name: "Create user" }).click();
  await expect(admin.getByTestId("users").locator(`tr[data-user="${name}"]`)).toContainText("customer");
}

test("an admin's bad input gets a precise message", async ({ page }) => {
  await signIn(page, "admin");
  await page.goto("/admin");
  await waitForHydration(page);
  await page.getByLabel("Threshold", { exact: true }).fill("12,50");
  await page.getByRole("button", { name: "Set threshold" }).click();
  await expect(page.getByText('"12,50" is not an amount; write it like 79.00')).toBeVisible();
});

test("an admin changes a user's roles, disables and enables them from the user's row, and publishes a policy file as a reviewed new version of the chosen policy", async ({ browser }) => {
  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, "admin");
  await admin.goto("/admin");
  await waitForHydration(admin);
  const users = admin.getByTestId("users");

  // A new user, then a role change that takes effect on their next request.
  await createCustomer(admin, "temp-approver", "Temp Approver", "temp-password-1");

  const temp = await (await browser.newContext()).newPage();
  await temp.goto("/login");
  await waitForHydration(temp);
  await temp.getByLabel("User name").fill("temp-approver");
  await temp.getByLabel("Password").fill("temp-password-1");
  await temp.getByRole("button", { name: "Sign in" }).click();
  await expect(temp.getByTestId("signed-in-as")).toBeVisible();
  expect((await temp.request.get("/queue")).status()).toBe(403);

  // Each account's actions are on its row.
  const row = (name: string) => users.locator(`tr[data-user="${name}"]`);
  const outcome = admin.getByTestId("user-action-outcome");
  await openDisclosure(row("temp-approver").locator("details", { hasText: "Roles…" }));
  await row("temp-approver").getByLabel("Roles for temp-approver").fill("approver, manager");
  await row("temp-approver").getByRole("button", { name: "Save roles" }).click();
  await expect(outcome.getByRole("status")).toHaveText("temp-approver now has the roles approver,manager");
  await expect(row("temp-approver")).toContainText("approver,manager");
  expect((await temp.request.get("/queue")).status()).toBe(200);
  // A new approver's limit reads in the currency's units, not minor units.
  await expect(row("temp-approver")).toContainText("default: 1000.00 EUR");
  await expect(admin.locator("body")).not.toContainText("minor units");

  // Removing one's own admin role is refused, with the reason.
  await openDisclosure(row("admin").locator("details", { hasText: "Roles…" }));
  await row("admin").getByLabel("Roles for admin").fill("manager");
  await row("admin").getByRole("button", { name: "Save roles" }).click();
  await expect(outcome.getByRole("alert")).toHaveText("you cannot remove your own admin role; ask another admin");

  // Disabling says what it does before it happens: signed out everywhere,
  // and back once enabled.
  await openDisclosure(row("temp-approver").locator("details", { hasText: "Disable…" }));
  await expect(row("temp-approver")).toContainText("temp-approver is signed out everywhere and cannot sign in until enabled again.");
  await row("temp-approver").getByRole("button", { name: "Disable temp-approver" }).click();
  await expect(row("temp-approver")).toContainText("disabled");
  expect((await temp.request.get("/api/v1/me")).status()).toBe(401);
  await row("temp-approver").getByRole("button", { name: "Enable temp-approver" }).click();
  await expect(row("temp-approver")).toContainText("active");

  // A new policy from a file: its slug from the file name, its title from
  // the first heading; every line shows as added before it goes live.
  const editor = admin.getByTestId("policy-editor");
  const review = editor.getByTestId("policy-review");
  const chooseFile = (text: string, name: string) =>
    editor.getByLabel("Markdown file (fills the text below)").setInputFiles({
      name,
      mimeType: "text/markdown",
      buffer: Buffer.from(text),
    });
  const first = "# Gift card policy\n\n## 1. Refunds\n\nGift cards are not refundable.\n";
  await chooseFile(first, "Gift Cards.md");
  await expect(editor.getByLabel("Slug of the new policy")).toHaveValue("gift-cards");
  await expect(editor.getByLabel("Title")).toHaveValue("Gift card policy");
  await expect(editor.getByLabel("Markdown (## headings become citable sections)")).toHaveValue(first);
  await editor.getByRole("button", { name: "Review changes" }).click();
  await expect(review).toContainText("A new policy: 5 line(s) added, 0 removed.");
  await expect(review).toContainText("Citable sections: 1. Refunds");
  await review.getByRole("button", { name: "Publish new policy" }).click();
  await expect(editor.getByText("gift-cards published (version")).toBeVisible();

  // A new version of the chosen policy, whatever the file is called: the
  // changed line shows removed and added, and an edit after the review
  // withdraws it (what goes live is what was seen).
  await editor.getByLabel("Policy", { exact: true }).selectOption({ label: "Gift card policy (gift-cards)" });
  await expect(editor.getByLabel("Slug of the new policy")).toHaveCount(0);
  const second = first.replace("are not refundable.", "are refundable within 14 days.");
  await chooseFile(second, "gift-cards-2027-draft.md");
  await editor.getByRole("button", { name: "Review changes" }).click();
  await expect(review).toContainText("Against Gift card policy, version");
  await expect(review).toContainText("1 line(s) added, 1 removed.");
  await expect(review.locator(".removed")).toHaveText("- Gift cards are not refundable.");
  await expect(review.locator(".added")).toHaveText("+ Gift cards are refundable within 14 days.");
  await editor.getByLabel("Markdown (## headings become citable sections)").fill(second + "\nExtra.\n");
  await expect(review).toHaveCount(0);
  await editor.getByLabel("Markdown (## headings become citable sections)").fill(second);
  await editor.getByRole("button", { name: "Review changes" }).click();
  await review.getByRole("button", { name: "Publish as new version" }).click();
  await expect(editor.getByText("gift-cards: version")).toBeVisible();
  await expect(admin.locator('[data-policy^="gift-cards-2027"]')).toHaveCount(0);
  const policy = admin.locator('[data-policy="gift-cards"]');
  await expect(policy).toContainText("Gift card policy");
  await expect(policy.getByTestId("earlier-versions")).toContainText("earlier:");
});

test("on a phone an admin reaches every user's actions from the row and reviews a policy change before it could go live", async ({ browser }) => {
  const admin = await pageAs(browser, "admin", sizes[1].viewport);
  await admin.goto("/admin");
  await waitForHydration(admin);
  const users = admin.getByTestId("users");
  const row = users.locator('tr[data-user="phone-approver"]');
  const outcome = admin.getByTestId("user-action-outcome");

  await createCustomer(admin, "phone-approver", "Phone Approver", "phone-password-1");

  await openDisclosure(row.locator("details", { hasText: "Roles…" }));
  await row.getByLabel("Roles for phone-approver").fill("approver");
  await row.getByRole("button", { name: "Save roles" }).click();
  await expect(outcome.getByRole("status")).toHaveText("phone-approver now has the roles approver");
  await setApprovalLimit(admin, "phone-approver", "25.00");

  await openDisclosure(row.locator("details", { hasText: "Disable…" }));
  await expect(row).toContainText("phone-approver is signed out everywhere and cannot sign in until enabled again.");
  await row.getByRole("button", { name: "Disable phone-approver" }).click();
  await expect(row).toContainText("disabled");

  // Choosing the demo's returns policy starts the editor from the version
  // in force; one line added shows as the only change, and nothing is
  // published until the admin says so.
  const editor = admin.getByTestId("policy-editor");
  await editor.getByLabel("Policy", { exact: true }).selectOption({ label: "Returns and refunds policy (returns-policy)" });
  const text = editor.getByLabel("Markdown (## headings become citable sections)");
  await expect(text).toHaveValue(/^# .*\n[\s\S]*## /);
  const inForce = await text.inputValue();
  expect(inForce.endsWith("\n")).toBe(true);
  await text.fill(inForce + "A line only the phone test adds.\n");
  await editor.getByRole("button", { name: "Review changes" }).click();
  const review = editor.getByTestId("policy-review");
  await expect(review).toContainText("1 line(s) added, 0 removed.");
  await expect(review.locator(".added").last()).toHaveText("+ A line only the phone test adds.");
  await review.getByText("A line only the phone test adds.").scrollIntoViewIfNeeded();
  await expect(review.getByText("A line only the phone test adds.")).toBeInViewport();

  const overflow = await admin.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await admin.screenshot({ path: test.info().outputPath("phone-admin-actions.png"), fullPage: true });
  expect(overflow).toBeLessThanOrEqual(0);
});
