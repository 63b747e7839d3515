import { expect, Page } from "@playwright/test";
import { demoPassword } from "../playwright.config";

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
