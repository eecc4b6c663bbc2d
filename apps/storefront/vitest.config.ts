import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "storefront",
    include: ["test/**/*.test.ts"],
    // Real sockets, the sandbox in process and, for test/browser, a real Chromium.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
