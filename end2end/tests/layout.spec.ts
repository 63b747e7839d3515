import { expect, test } from "./fixtures";
import { proposeViaApi, rejectAs, signIn, waitForHydration } from "./helpers";

// Responsive and keyboard basics, checked rather than assumed.

const phone = { width: 390, height: 844 };

for (const [user, path] of [
  ["customer", "/chat"],
  ["approver", "/queue"],
  ["manager", "/audit"],
  ["admin", "/admin"],
] as const) {
  test(`${path} fits a phone screen without sideways scrolling`, async ({ browser }) => {
    const context = await browser.newContext({ viewport: phone });
    const page = await context.newPage();
    await signIn(page, user);
    await page.goto(path);
    await waitForHydration(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await page.screenshot({ path: test.info().outputPath(`phone${path.replace("/", "-")}.png`), fullPage: true });
    expect(overflow).toBeLessThanOrEqual(0);
  });
}

test("the sign-in form works with the keyboard alone", async ({ page }) => {
  await page.goto("/login");
  await waitForHydration(page);
  await page.getByLabel("User name").focus();
  await page.keyboard.type("customer");
  await page.keyboard.press("Tab");
  await expect(page.getByLabel("Password")).toBeFocused();
  await page.keyboard.type("e2e-demo-password");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("signed-in-as")).toBeVisible();
});

test("a proposal's page with its timeline fits a phone screen", async ({ browser }) => {
  const context = await browser.newContext({ viewport: phone });
  const page = await context.newPage();
  await signIn(page, "approver");
  // Its own proposal (run alone, the suite has made none yet), rejected
  // afterwards so the order is free for the specs that refund it.
  const proposal = await proposeViaApi(page, "4824");
  await page.goto(`/proposals/${proposal.id}`);
  await waitForHydration(page);
  await expect(page.getByTestId("timeline")).toBeVisible();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.screenshot({ path: test.info().outputPath("phone-proposal.png"), fullPage: true });
  expect(overflow).toBeLessThanOrEqual(0);
  await context.close();
  await rejectAs(browser, "approver2", proposal.id, "Only looked at by the layout test.");
});
