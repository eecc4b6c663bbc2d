import { defineConfig } from "tsup";

// ESM for modern consumers, CommonJS for Medusa and older toolchains, types for both. The CLI is
// an ESM entry of its own, started by bin/purchase-auth-batch.js.
export default defineConfig([
  {
    entry: ["src/index.ts"],
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node20",
  },
  {
    entry: { cli: "src/cli/main.ts" },
    format: ["esm"],
    dts: false,
    sourcemap: true,
    clean: false,
    target: "node20",
    // Optional, loaded only by --sandbox and --postgres: never bundled.
    external: ["@purchase-auth/sandbox", "pg"],
  },
]);
