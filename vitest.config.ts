import { defineConfig } from "vitest/config";

// One root config; each package is a project so `pnpm test` runs everything and
// `vitest --project core` runs one package.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "apps/*/vitest.config.ts"],
  },
});
