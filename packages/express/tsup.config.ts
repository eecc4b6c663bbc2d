import { defineConfig } from "tsup";

// ESM for modern consumers, CommonJS for Medusa and older toolchains, types for both.
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
});
