// CommonJS syntax on purpose: this package is CommonJS (Medusa requires plugins), and Vite warns
// about ESM syntax in a config file it loads as CommonJS.
/** @type {import("vitest/config").UserWorkspaceConfig} */
module.exports = {
  test: {
    name: "medusa",
    include: ["test/**/*.test.ts"],
    // Medusa's test runners register their suites through the global describe/beforeAll/...
    globals: true,
    globalSetup: ["./test/support/postgres.global-setup.ts"],
    setupFiles: ["./test/support/database-env.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
};
