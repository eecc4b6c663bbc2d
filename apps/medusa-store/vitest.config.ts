// CommonJS syntax on purpose: a Medusa application is CommonJS, and Vite warns about ESM syntax in a
// config file it loads as CommonJS.
/** @type {import("vitest/config").UserWorkspaceConfig} */
module.exports = {
  test: {
    name: "medusa-store",
    include: ["test/**/*.test.ts"],
    // Medusa's test runners register their suites through the global describe/beforeAll/...
    globals: true,
    globalSetup: ["./test/support/postgres.global-setup.ts"],
    setupFiles: [
      "./test/support/database-env.ts",
      "./test/support/load-typescript-config.ts",
      "./test/support/database-template.ts",
    ],
    testTimeout: 120_000,
    hookTimeout: 240_000,
  },
};
