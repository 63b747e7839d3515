import base from "./playwright.config";

// Browser benchmarks: the same server and browser as the tests, run on
// demand (`npx playwright test --config bench.config.ts`), not by
// scripts/test.sh: they measure, they do not pass or fail on a figure.
export default { ...base, testDir: "./bench", timeout: 900_000 };
