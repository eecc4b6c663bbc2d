import { defineConfig } from "vitest/config";

// One root config; each package is a project so `pnpm test` runs everything and
// `vitest --project core` runs one package.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "apps/*/vitest.config.ts"],
    // Most of the suite's time is spent waiting (Medusa and PostgreSQL starting, processes being
    // killed and restarted, a browser): on a 2-core machine vitest's default of one worker per
    // spare core runs the files one after another. Three overlap the waits.
    maxWorkers: 3,
  },
});
