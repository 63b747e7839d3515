import { expect, test } from "./fixtures";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { pageAs, proposeViaApi, signIn, sizes, waitForHydration } from "./helpers";

test("a manager filters the journal, exports it, and sees the chain break after a row is tampered with", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer2");
  const proposal = await proposeViaApi(customer, "4822");

  const page = await (await browser.newContext({ acceptDownloads: true })).newPage();
  await signIn(page, "manager");
  await page.goto("/audit");
  await waitForHydration(page);
  await expect(page.getByTestId("chain-status")).toHaveAttribute("data-intact", "true");

  await page.getByLabel("Order").fill("4822");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/order=4822/);
  const table = page.getByTestId("audit-table");
  await expect(table).toContainText(proposal.id);
  // Each row reads as a sentence by a named person, with the full record
  // indented for reading behind "Full record".
  const proposed = table.locator('tbody tr[data-kind="proposed"]');
  await expect(proposed).toContainText("Refund proposed");
  await expect(proposed).toContainText("External agent (service account) (agent)");
  await expect(proposed).toContainText("awaiting approval");
  await proposed.getByText("Full record").click();
  await expect(proposed.locator("pre.json")).toBeVisible();
  expect(await proposed.locator("pre.json").textContent()).toContain('\n  "amount": "129.00 EUR"');
  await expect(table).not.toContainText("4821");

  const download = page.waitForEvent("download");
  await page.getByTestId("export-csv").click();
  const csv = readFileSync(await (await download).path(), "utf8");
  expect(csv.split("\n")[0]).toBe("seq,at,actor,action,proposal_id,order_id,from_status,to_status,payload,hash");
  expect(csv).toContain(proposal.id);
  expect(csv).not.toContain(",4821,");

  // Narrowed by action and by who acted; a filter nothing matches says so.
  await page.getByLabel("Action").selectOption("proposed");
  await page.getByLabel("Who").fill("agent");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/action=proposed/);
  await expect(table.locator("tbody tr")).toHaveCount(1);
  await expect(table).toContainText("External agent (service account) (agent)");
  await expect(table.locator("tbody tr")).toContainText("amount: 129.00 EUR");
  await page.getByLabel("Who").fill("nobody-at-all");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByTestId("audit-empty")).toHaveText("No events match these filters.");

  // Someone edits a stored event behind the application's back.
  execFileSync("python3", [
    "-c",
    "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE journal_events SET actor='user:mallory' WHERE stream=?\", (sys.argv[2],)); c.commit()",
    "../target/e2e/countersign.db",
    proposal.id,
  ]);
  await page.reload();
  await waitForHydration(page);
  await expect(page.getByTestId("chain-status")).toHaveAttribute("data-intact", "false");
  await expect(page.getByRole("alert")).toContainText("edited event");
  await expect(page.getByTestId("chain-status")).toContainText("edited event");
});

test("on a phone a manager finds an approver's events by their display name and reads the full record without sideways page scrolling", async ({ browser }) => {
  const page = await pageAs(browser, "manager", sizes[1].viewport);
  await page.goto("/audit");
  await waitForHydration(page);
  await page.getByLabel("Who").fill("external agent (service account)");
  await page.getByLabel("Action").selectOption("proposed");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/action=proposed/);
  const table = page.getByTestId("audit-table");
  const first = table.locator("tbody tr").first();
  await expect(first).toContainText("Refund proposed");
  await expect(first).toContainText("External agent (service account) (agent)");

  // The wide table scrolls inside its own region, never the page.
  const region = page.getByRole("region", { name: "Audit events" });
  await expect(region).toBeVisible();
  expect(await region.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  await first.getByText("Full record").click();
  const record = first.locator("pre.json");
  await record.scrollIntoViewIfNeeded();
  await expect(record).toBeInViewport();
  expect(await record.textContent()).toContain('\n  "amount": ');

  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await page.screenshot({ path: test.info().outputPath("phone-audit-record.png"), fullPage: true });
  expect(overflow).toBeLessThanOrEqual(0);
});
