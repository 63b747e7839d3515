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

/** Proposes a refund through the JSON API with the page's session and CSRF token. */
export async function proposeViaApi(page: Page, orderId: string, section = "returns-policy:section-3") {
  const csrf = await page.locator('meta[name="csrf-token"]').getAttribute("content");
  const response = await page.request.post("/api/v1/proposals", {
    headers: { "x-csrf-token": csrf ?? "", origin: new URL(page.url()).origin },
    data: {
      order_id: orderId,
      evidence: [{ reference: `order:${orderId}` }, { reference: section }],
      recommendation: "Refund under the cited policy section.",
      agent: "refund_specialist",
    },
  });
  expect(response.status()).toBe(201);
  return response.json();
}
