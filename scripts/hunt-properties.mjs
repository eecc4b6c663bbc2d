// Hunts for new failures of the convergence properties: each runs on random seeds, many more
// scenarios than `pnpm test` replays on its fixed seed. A failure prints fast-check's seed and path;
// replay it with PROPERTY_SEED=<seed> PROPERTY_PATH=<path> and the same vitest command.
//
//   pnpm hunt                       # the defaults below (about 15 minutes on two cores)
//   HUNT_SCALE=4 pnpm hunt          # four times the scenarios
//   HUNT_ONLY=medusa pnpm hunt      # one property (express-memory, express-postgres, medusa)
import { spawnSync } from "node:child_process";
import { delimiter, resolve } from "node:path";

const { HUNT_SCALE, HUNT_ONLY } = process.env;
const scale = Number(HUNT_SCALE ?? 1);
if (!(scale > 0)) throw new Error(`HUNT_SCALE must be a positive number, got ${HUNT_SCALE}`);

/** Each property: the vitest filter that runs it and its scenarios at scale 1. */
const PROPERTIES = [
  {
    name: "express-memory",
    args: ["--project", "express", "test/convergence-property.test.ts", "-t", "memory"],
    runs: 1000,
  },
  {
    name: "express-postgres",
    args: ["--project", "express", "test/convergence-property.test.ts", "-t", "PostgreSQL"],
    runs: 200,
    // The PostgreSQL test runs half of PROPERTY_RUNS scenarios.
    runsPerScenario: 2,
  },
  {
    name: "medusa",
    args: ["--project", "medusa", "test/convergence-property.module.test.ts"],
    runs: 300,
  },
];

const only = HUNT_ONLY?.split(",");
const chosen = PROPERTIES.filter((property) => only === undefined || only.includes(property.name));
if (chosen.length === 0)
  throw new Error(`HUNT_ONLY names none of ${PROPERTIES.map((p) => p.name).join(", ")}`);

const results = [];
for (const property of chosen) {
  const runs = Math.max(1, Math.round(property.runs * scale));
  console.log(`\n== ${property.name}: ${runs} scenarios on a random seed`);
  const started = Date.now();
  const run = spawnSync("vitest", ["run", ...property.args], {
    stdio: "inherit",
    env: {
      ...process.env,
      PROPERTY_SEED: "random",
      PROPERTY_RUNS: String(runs * (property.runsPerScenario ?? 1)),
      PATH: `${resolve("node_modules/.bin")}${delimiter}${process.env.PATH}`,
    },
  });
  results.push({ name: property.name, runs, ok: run.status === 0, seconds: (Date.now() - started) / 1000 });
}

console.log("\nproperty hunt:");
for (const { name, runs, ok, seconds } of results) {
  console.log(
    `  ${name.padEnd(17)} ${String(runs).padStart(5)} scenarios  ${ok ? "passed" : "FAILED"}  ${seconds.toFixed(0)} s`,
  );
}
process.exit(results.every((result) => result.ok) ? 0 : 1);
