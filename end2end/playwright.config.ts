import { defineConfig } from "@playwright/test";

// The server under test: the real binary on a fresh SQLite database with the
// demo data, serving the site built by scripts/build-site.sh.
const port = Number(process.env.E2E_PORT ?? 3210);
const bin = process.env.COUNTERSIGN_BIN ?? "../target/debug/countersign";
// Where the built site and the test databases live: a run of its own (a
// copy of the binary and site, its own data folder) is not disturbed by
// other builds and runs sharing target/.
const siteRoot = process.env.E2E_SITE_ROOT ?? "../target/site";
const dataDir = process.env.E2E_DATA_DIR ?? "../target";
export const demoPassword = "e2e-demo-password";
// The mounted sandbox provider's secret key: every sandbox endpoint needs it.
export const sandboxKey = "sk_sbx_e2e_tests";
// The static host page that embeds the widget, on an origin of its own.
export const hostSitePort = Number(process.env.E2E_HOST_SITE_PORT ?? 3211);
// A second server whose chat model (a scripted stand-in) takes 30 s per
// reply, so that Stop can be pressed while a reply is being written.
export const slowChatPort = Number(process.env.E2E_SLOW_CHAT_PORT ?? 3212);
const slowModelPort = Number(process.env.E2E_SLOW_MODEL_PORT ?? 3213);
// Two agent groups (scripts/groups.sh): support, whose refund specialist
// asks the returns desk (the second group) before asking the customer.
export const supportGroupPort = Number(process.env.E2E_SUPPORT_GROUP_PORT ?? 3214);
export const returnsGroupPort = Number(process.env.E2E_RETURNS_GROUP_PORT ?? 3215);

export default defineConfig({
  testDir: "./tests",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    screenshot: "on",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: [{
    command: `rm -rf ${dataDir}/e2e && mkdir -p ${dataDir}/e2e && ${bin} serve`,
    url: `http://127.0.0.1:${port}/readyz`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    env: {
      COUNTERSIGN_LISTEN: `127.0.0.1:${port}`,
      COUNTERSIGN_DATABASE_URL: `sqlite://${dataDir}/e2e/countersign.db`,
      COUNTERSIGN_SITE_ROOT: siteRoot,
      COUNTERSIGN_DEMO_PASSWORD: demoPassword,
      COUNTERSIGN_SEED_DEMO: "true",
      // Short enough that a provider that hangs turns into "outcome unknown"
      // within a test, and the reconciler resolves it quickly.
      COUNTERSIGN_PAYMENT_TIMEOUT_MS: "1500",
      COUNTERSIGN_SANDBOX_SECRET_KEY: sandboxKey,
      COUNTERSIGN_RECONCILE_INTERVAL_SECONDS: "1",
      RUST_LOG: "warn",
    },
  }, {
    command: `node host-site/serve.mjs ${hostSitePort}`,
    url: `http://127.0.0.1:${hostSitePort}/`,
    reuseExistingServer: false,
    timeout: 30_000,
  }, {
    command: `node slow-model/serve.mjs ${slowModelPort} 30000`,
    url: `http://127.0.0.1:${slowModelPort}/`,
    reuseExistingServer: false,
    timeout: 30_000,
  }, {
    command: `rm -rf ${dataDir}/e2e-slow && mkdir -p ${dataDir}/e2e-slow && ${bin} serve`,
    url: `http://127.0.0.1:${slowChatPort}/readyz`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    env: {
      COUNTERSIGN_LISTEN: `127.0.0.1:${slowChatPort}`,
      COUNTERSIGN_DATABASE_URL: `sqlite://${dataDir}/e2e-slow/countersign.db`,
      COUNTERSIGN_SITE_ROOT: siteRoot,
      COUNTERSIGN_DEMO_PASSWORD: demoPassword,
      COUNTERSIGN_SEED_DEMO: "true",
      COUNTERSIGN_MODEL_BACKEND: "openai",
      COUNTERSIGN_MODEL_BASE_URL: `http://127.0.0.1:${slowModelPort}/v1`,
      COUNTERSIGN_MODEL_NAME: "slow-scripted",
      COUNTERSIGN_MODEL_TIMEOUT_SECONDS: "60",
      RUST_LOG: "warn",
    },
  }, {
    command: `rm -rf ${dataDir}/e2e-groups && ../scripts/groups.sh ${bin} ${dataDir}/e2e-groups 127.0.0.1:${supportGroupPort} 127.0.0.1:${returnsGroupPort}`,
    url: `http://127.0.0.1:${supportGroupPort}/readyz`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    env: {
      COUNTERSIGN_SITE_ROOT: siteRoot,
      COUNTERSIGN_DEMO_PASSWORD: demoPassword,
      COUNTERSIGN_SANDBOX_SECRET_KEY: sandboxKey,
      // What the returns desk has no record of goes on to "rogue", a
      // group the cycle test plays in Node (tests/peer-group.ts).
      RETURNS_FORWARD: "returns.inspection=rogue",
      RUST_LOG: "warn",
    },
  }],
});
