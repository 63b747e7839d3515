import { Browser, Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { demoPassword, returnsGroupPort, supportGroupPort } from "../playwright.config";
import { expectNoSeriousA11yViolations, signIn, waitForHydration } from "./helpers";
import { extension as signedTask, GroupKey, serveGroups } from "./peer-group";

/** The returns group's /admin, signed in as its admin. */
async function returnsAdmin(browser: Browser): Promise<Page> {
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`http://127.0.0.1:${returnsGroupPort}/login`);
  await waitForHydration(admin);
  await admin.getByLabel("User name").fill("admin");
  await admin.getByLabel("Password").fill(demoPassword);
  await admin.getByRole("button", { name: "Sign in" }).click();
  await expect(admin.getByTestId("signed-in-as")).toBeVisible();
  await admin.goto(`http://127.0.0.1:${returnsGroupPort}/admin`);
  await waitForHydration(admin);
  return admin;
}

// Against the two agent groups of scripts/groups.sh: the support group's
// refund specialist asks the returns desk (the other group, its own
// database and key) over the gateway before asking the customer.
test.use({ baseURL: `http://127.0.0.1:${supportGroupPort}` });

/** The A2A extension a signed task travels in. */
const extension = "https://countersign.dev/a2a/signed-task/v1";

test("the review queue shows the returns desk's signed answer as evidence, with where it came from", async ({ browser }) => {
  const customer = await (await browser.newContext()).newPage();
  await signIn(customer, "customer");
  await customer.goto("/chat");
  await waitForHydration(customer);
  const input = customer.getByTestId("chat-input");
  await input.fill("check order 4821 and refund it if it qualifies");
  await input.press("Enter");
  await expect(customer.getByTestId("chat-thinking")).toHaveCount(0, { timeout: 30_000 });
  const reply = customer.getByTestId("transcript").locator(".msg.agent").last();
  // The desk had the parcel on record as sealed: no question to the customer.
  await expect(reply).toContainText("I have prepared refund proposal");
  await expect(reply).not.toContainText("was the item opened?");

  const approver = await (await browser.newContext()).newPage();
  await signIn(approver, "approver");
  await approver.goto("/queue");
  await waitForHydration(approver);
  const card = approver.locator("[data-proposal]").filter({ hasText: "Refund 79.00 EUR for order 4821" });
  await expect(card).toHaveCount(1);
  await card.getByText(/Evidence \(3 citations\)/).click();
  const answer = card.locator('[data-reference^="peer-task:"]');
  await expect(answer).toContainText("returns.inspection answered by agent group returns");
  await expect(answer).toContainText("signed by returns/gateway/v1");
  await expect(answer).toContainText("signature verified");
  await expect(answer).toContainText("signed answer");
  await expect(answer.locator("blockquote")).toContainText("condition: sealed");
  await expect(card.locator(".recommendation")).toContainText("the returns desk (agent group returns) recorded the returned parcel as sealed");
});

test("the returns group's admin sees a refused task with its reason, and whom the group trusts", async ({ browser, request }) => {
  // A task claiming to come from a group nobody allowed: refused on its
  // claims, before any signature work, and journaled with the reason.
  const envelope = {
    envelope: {
      v: 1,
      task_key: "billing:e2e-1",
      kind: "returns.inspection",
      input: { order_id: "4821" },
      from: "billing",
      to: "returns",
      root_key: "billing:e2e-1",
      parent_key: null,
      route: ["billing"],
      depth: 0,
      budget: { model_calls: 0, steps: 1, tokens: 0, money: null, deadline: new Date(Date.now() + 600_000).toISOString() },
      parent_remaining: null,
      created: new Date().toISOString(),
      nonce: "e2e-nonce-1",
      signer: { group: "billing", key_id: "gateway", version: 1 },
      parent: null,
    },
    signature: { protected: "e30", signature: "AAAA" },
  };
  const send = () => request.post(`http://127.0.0.1:${returnsGroupPort}/a2a`, {
    headers: { "A2A-Version": "1.0" },
    data: {
      jsonrpc: "2.0", id: 1, method: "SendMessage",
      params: { message: { messageId: "e2e", role: "ROLE_USER", parts: [{ text: "task" }], metadata: { [extension]: envelope } } },
    },
  });
  const answer = await (await send()).json();
  expect(answer.error.code).toBe(-32602);
  expect(answer.error.data[0].metadata.countersignReason).toBe("pair_not_allowed");

  const admin = await returnsAdmin(browser);
  const gateway = admin.getByTestId("gateway-admin");
  await expect(gateway.getByTestId("gateway-group")).toHaveText("returns");
  // With the gateway on, its trust forms are part of the page's scan.
  await expectNoSeriousA11yViolations(admin);
  await expect(gateway.getByTestId("gateway-keys")).toContainText("support/gateway/v1");
  // Its own key with the fingerprint to read out to a new peer, and the
  // kinds it speaks.
  await expect(gateway.getByTestId("gateway-own-keys")).toContainText("returns/gateway/v1 signs now");
  await expect(gateway.getByTestId("gateway-own-keys")).toContainText(/fingerprint [0-9a-f]{4}:/);
  await expect(gateway.getByTestId("gateway-kinds")).toContainText("returns.inspection");
  await expect(gateway.getByTestId("gateway-pairs")).toContainText("support → returns: returns.inspection");
  const refused = gateway.locator('[data-testid="gateway-refusals"] li[data-code="pair_not_allowed"]').first();
  await expect(refused).toContainText("from billing");
  await expect(refused).toContainText("billing may not send returns.inspection tasks to returns: the pair is not on the allowlist");
  // The admin changes the trust from the page. Support's card, signed by
  // a key pinned before, vouches for itself: nothing new to pin.
  const pinCard = gateway.getByTestId("gateway-pin-card");
  await pinCard.getByLabel("Group").fill("support");
  await pinCard.getByLabel("Its address (the card is at /.well-known/agent-card.json)").fill(`http://127.0.0.1:${supportGroupPort}`);
  await pinCard.getByRole("button", { name: "Pin from card" }).click();
  await expect(gateway.getByRole("status").filter({ hasText: "support's card verified" })).toContainText(
    "support's card verified (vouched for by a key pinned before); nothing new: every key the card lists is pinned already",
  );
  // Billing allowed from the form: the same envelope now passes the pair
  // and is refused further on, for its signature (a placeholder).
  const allow = gateway.getByTestId("gateway-allow-pair");
  await allow.getByLabel("From group").fill("billing");
  await expect(allow.getByLabel("To group")).toHaveValue("returns");
  await allow.getByLabel("Task kind").selectOption("returns.inspection");
  await allow.getByRole("button", { name: "Allow pair" }).click();
  await expect(gateway.getByRole("status").filter({ hasText: "billing" })).toHaveText("billing → returns: returns.inspection is allowed");
  const billing = gateway.locator('[data-testid="gateway-pairs"] li[data-pair="billing>returns:returns.inspection"]');
  await expect(billing).toBeVisible();
  const again = await (await send()).json();
  expect(again.error.data[0].metadata.countersignReason).toBe("bad_signature");
  // Withdrawn with its own button: gone from the list, refused again.
  await billing.getByRole("button", { name: "Withdraw billing → returns: returns.inspection" }).click();
  await expect(billing).toHaveCount(0);
  await expect(gateway.getByTestId("gateway-pairs")).toContainText("support → returns: returns.inspection");
  const withdrawn = await (await send()).json();
  expect(withdrawn.error.data[0].metadata.countersignReason).toBe("pair_not_allowed");

  // A plain A2A peer: a secret issued from the page (shown once) and a
  // pair allowed without signatures let it send; revoked, it cannot.
  const issue = gateway.getByTestId("gateway-issue-secret");
  await issue.getByLabel("Plain peer's group").fill("plain-agent");
  await issue.getByRole("button", { name: "Issue a secret" }).click();
  await expect(gateway.getByTestId("gateway-secret")).toContainText("cspk_");
  const secret = (await gateway.getByTestId("gateway-secret").textContent()) ?? "";
  await allow.getByLabel("From group").fill("plain-agent");
  await allow.getByLabel("Task kind").selectOption("returns.inspection");
  await allow.getByLabel("without signatures", { exact: false }).check();
  await allow.getByRole("button", { name: "Allow pair" }).click();
  const plainPair = gateway.locator('[data-testid="gateway-pairs"] li[data-pair="plain-agent>returns:returns.inspection"]');
  await expect(plainPair).toHaveAttribute("data-unsigned", "true");
  const plain = (id: string) => request.post(`http://127.0.0.1:${returnsGroupPort}/a2a`, {
    headers: { "A2A-Version": "1.0", Authorization: `Bearer ${secret}` },
    data: {
      jsonrpc: "2.0", id: 1, method: "SendMessage",
      params: { message: { messageId: id, role: "ROLE_USER", parts: [{ data: { order_id: "4821" } }] } },
    },
  });
  const taken = await (await plain("e2e-plain-1")).json();
  expect(taken.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
  await admin.reload();
  await waitForHydration(admin);
  const plainTask = gateway.getByTestId("gateway-inbound").locator(`tr[data-task="${taken.result.task.id}"]`);
  await expect(plainTask).toContainText("unsigned (a plain A2A peer's)");
  await gateway.getByRole("button", { name: "Revoke plain-agent's secrets" }).click();
  await expect(gateway.getByRole("status").filter({ hasText: "revoked 1 secret" })).toBeVisible();
  const revoked = await (await plain("e2e-plain-2")).json();
  expect(revoked.error.message).toContain("revoked");
  await plainPair.getByRole("button", { name: "Withdraw plain-agent → returns: returns.inspection" }).click();
  await expect(plainPair).toHaveCount(0);

  // The flagship's inspection (the test before): who sent it, its route
  // and depth, and what answering it spent.
  const received = gateway.getByTestId("gateway-inbound").locator('tr[data-state="completed"]').filter({ hasText: "support" }).first();
  await expect(received).toContainText("support");
  await expect(received.locator("td").nth(4)).toHaveText("support");
  await expect(received.locator("td").nth(5)).toHaveText("0");
  await expect(received.locator("td").nth(6)).toHaveText("1 step");
});

test("a task passed back to the returns group is refused there as a cycle, and its admin reads why", async ({ browser, request }) => {
  // Two groups played in Node: billing asks; rogue, which the returns desk
  // passes what it has no record of (RETURNS_FORWARD), sends it back.
  const billing = new GroupKey("billing");
  const rogue = new GroupKey("rogue");
  const peers = await serveGroups([billing, rogue]);
  try {
    const admin = await returnsAdmin(browser);
    const gateway = admin.getByTestId("gateway-admin");
    // The returns admin trusts both from the page: first contact, so each
    // card is pinned only with the fingerprint its admin read out.
    for (const key of [billing, rogue]) {
      const pinCard = gateway.getByTestId("gateway-pin-card");
      await pinCard.getByLabel("Group").fill(key.group);
      await pinCard.getByLabel("Its address (the card is at /.well-known/agent-card.json)").fill(peers.base(key.group));
      await pinCard.getByLabel("Fingerprint of its current key (first contact)").fill(key.fingerprint());
      await pinCard.getByRole("button", { name: "Pin from card" }).click();
      await expect(gateway.getByRole("status").filter({ hasText: `${key.group}'s card verified` })).toContainText(`pinned ${key.kid}`);
      const allow = gateway.getByTestId("gateway-allow-pair");
      await allow.getByLabel("From group").fill(key.group);
      await allow.getByLabel("Task kind").selectOption("returns.inspection");
      await allow.getByRole("button", { name: "Allow pair" }).click();
      await expect(gateway.locator(`[data-testid="gateway-pairs"] li[data-pair="${key.group}>returns:returns.inspection"]`)).toBeVisible();
    }
    const setPeer = gateway.getByTestId("gateway-set-peer");
    await setPeer.getByLabel("Group").fill("rogue");
    await setPeer.getByLabel("A2A endpoint").fill(`${peers.base("rogue")}/a2a`);
    await setPeer.getByRole("button", { name: "Set address" }).click();
    await expect(gateway.locator('[data-peer="rogue"]')).toBeVisible();

    const send = async (signed: unknown) => (await request.post(`http://127.0.0.1:${returnsGroupPort}/a2a`, {
      headers: { "A2A-Version": "1.0" },
      data: {
        jsonrpc: "2.0", id: 1, method: "SendMessage",
        params: { message: { messageId: "e2e-cycle", role: "ROLE_USER", parts: [], metadata: { [signedTask]: signed } } },
      },
    })).json();
    // Billing asks about a parcel the returns desk never saw: the desk
    // passes it on to rogue, signed, its route billing → returns.
    const root = await send(billing.root("returns", "billing:cycle-1", { order_id: "4823" }));
    expect(root.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
    const passed = () => peers.received.find((call) => call.method === "SendMessage");
    await expect.poll(() => passed() !== undefined).toBe(true);
    const child = passed().params.message.metadata[signedTask];
    expect(child.envelope.route).toEqual(["billing", "returns"]);
    // Rogue sends it straight back, route extended honestly and signed:
    // the returns group finds itself on the signed route.
    const back = await send(rogue.passOn(child, "returns", "rogue:back-1"));
    expect(back.error.data[0].metadata.countersignReason).toBe("cycle");

    await admin.reload();
    await waitForHydration(admin);
    const refused = gateway.locator('[data-testid="gateway-refusals"] li[data-code="cycle"]').first();
    await expect(refused).toContainText("from rogue");
    await expect(refused).toContainText("returns already appears in the route billing → returns → rogue");
    await admin.screenshot({ path: test.info().outputPath("gateway-refused-cycle.png"), fullPage: true });
  } finally {
    await peers.close();
  }
});
