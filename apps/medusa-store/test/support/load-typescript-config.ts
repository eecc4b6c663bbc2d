import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

// Medusa loads medusa-config.ts with require(), as its CLI does after registering ts-node.
const require = createRequire(import.meta.url);
(require("ts-node") as typeof import("ts-node")).register({
  transpileOnly: true,
  skipProject: true,
  compilerOptions: { module: "commonjs", target: "es2022", esModuleInterop: true },
});

// Medusa resolves the plugin's provider ("@purchase-auth/medusa/providers/...") from the working
// directory, as it does when started in the application's folder.
process.chdir(fileURLToPath(new URL("../..", import.meta.url)));
