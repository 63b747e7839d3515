import { expect, test } from "./fixtures";
import { signIn, waitForHydration } from "./helpers";

test("a customer signs in, refreshes their orders through a server function, and signs out", async ({ page }) => {
  const errors: string[] = [];
  page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
  page.on("pageerror", (err) => errors.push(err.message));

  await signIn(page, "customer");
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("heading", { name: "Welcome, Cora Customer" })).toBeVisible();
  await expect(page.locator('[data-order="4821"]')).toContainText("79.00 EUR");

  const call = page.waitForResponse((r) => r.url().includes("/fn/my_orders"));
  await page.getByTestId("refresh-orders").click();
  expect((await call).status()).toBe(200);
  await expect(page.getByTestId("refresh-count")).toHaveText("Refreshed 1 time(s).");
  await expect(page.locator('[data-order="4821"]')).toContainText("Trail running jacket");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/login\?next=%2F$/);
  expect(errors).toEqual([]);
});

test("a wrong password shows a clear message and does not sign in", async ({ page }) => {
  await page.goto("/login");
  await waitForHydration(page);
  await page.getByLabel("User name").fill("approver2");
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("login-error")).toHaveText("wrong user name or password");
  await expect(page).toHaveURL(/\/login/);
});

test("a customer is refused the approver's review queue", async ({ page }) => {
  await signIn(page, "customer2");
  const response = await page.goto("/queue");
  expect(response?.status()).toBe(403);
  await expect(page.getByRole("heading", { name: "You do not have access to this page" })).toBeVisible();
});

test("each role lands on its own start page", async ({ page }) => {
  await signIn(page, "approver");
  await expect(page.getByRole("link", { name: "Open the review queue" })).toBeVisible();
  await page.getByRole("link", { name: "Review queue", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Review queue" })).toBeVisible();
});
