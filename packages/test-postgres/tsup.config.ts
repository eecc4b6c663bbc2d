import { defineConfig } from "tsup";

// Built (ESM only) so plain Node scripts can use it as well as the TypeScript tests.
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  dts: true,
  clean: true,
  target: "node20",
});
