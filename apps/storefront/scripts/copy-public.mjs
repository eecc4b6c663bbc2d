// The build's last step: the stylesheet and browser scripts are served as they are, so they are
// copied next to the compiled server (dist/public), where src/app.ts looks for them.
import { cpSync, rmSync } from "node:fs";

rmSync("dist/public", { recursive: true, force: true });
cpSync("src/public", "dist/public", { recursive: true });
