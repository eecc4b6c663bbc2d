#!/usr/bin/env node
// A committed launcher, so that pnpm can link the bin before `dist/` is built.
import("../dist/cli.js").catch((error) => {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/cli.js")) {
    console.error("purchase-auth-batch is not built yet: run `pnpm build` first.");
  } else {
    console.error(error);
  }
  process.exit(1);
});
