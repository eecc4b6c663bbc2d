import { fileURLToPath } from "node:url";
import { defineProject } from "vitest/config";

export default defineProject({
  resolve: {
    alias: {
      // The sandbox depends on core, so core cannot list it as a dependency (a cycle turbo rejects).
      // Core's tests use the sandbox's build, which `pnpm test` makes before running vitest.
      "@purchase-auth/sandbox": fileURLToPath(new URL("../sandbox/dist/index.js", import.meta.url)),
    },
  },
  test: {
    name: "core",
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    // Some tests stub globals and reload modules (code-generation-refused): each file in a module
    // graph of its own, whatever the default becomes.
    isolate: true,
  },
});
