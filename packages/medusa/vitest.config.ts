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
    // Loading Medusa (@medusajs/framework, core-flows, the payment module) costs about 4 CPU seconds
    // a process, more than most of these files' tests take: files share their worker's process, so
    // it loads once a worker. Each file still has its own database, sandbox and module runner, and
    // the runner starts and shuts the payment module down around every test.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
};
