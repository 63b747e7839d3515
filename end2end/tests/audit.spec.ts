import { expect, test } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { proposeViaApi, signIn, waitForHydration } from "./helpers";

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
  await expect(table).toContainText("proposed");
  await expect(table).toContainText(proposal.id);
  await expect(table).not.toContainText("4821");

  const download = page.waitForEvent("download");
  await page.getByTestId("export-csv").click();
  const csv = readFileSync(await (await download).path(), "utf8");
  expect(csv.split("\n")[0]).toBe("seq,at,actor,action,proposal_id,order_id,from_status,to_status,payload,hash");
  expect(csv).toContain(proposal.id);
  expect(csv).not.toContain(",4821,");

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
  await expect(page.getByTestId("chain-status")).toContainText("edited event");
});
