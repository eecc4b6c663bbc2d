import { parseArgs } from "node:util";
import { startSandbox } from "./server.js";

// purchase-auth-sandbox [--port 4010] [--host 127.0.0.1] [--seed N] [--token-lifetime S] [--no-demo] [--log]

const USAGE = `Usage: purchase-auth-sandbox [options]

  --port <n>            port to listen on (default 4010; 0 = any free port)
  --host <host>         interface to bind (default 127.0.0.1; the /sandbox control routes are unauthenticated)
  --seed <n>            seed of the fault probabilities
  --token-lifetime <s>  access token lifetime in seconds (default 3600)
  --no-demo             start empty, without the demo merchant and tokens
  --log                 print one line per request
  --help                show this text`;

function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`--${name} must be a whole number`);
  return parsed;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string" },
      host: { type: "string" },
      seed: { type: "string" },
      "token-lifetime": { type: "string" },
      "no-demo": { type: "boolean" },
      log: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }

  const sandbox = await startSandbox({
    port: integer(values.port, "port") ?? 4010,
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(values.seed === undefined ? {} : { seed: integer(values.seed, "seed") }),
    ...(values["token-lifetime"] === undefined
      ? {}
      : { tokenLifetimeSeconds: integer(values["token-lifetime"], "token-lifetime") }),
    demo: !values["no-demo"],
    logRequests: values.log ?? false,
  });

  const lines = [`Purchase Authorization Service sandbox listening on ${sandbox.url}`];
  const demo = sandbox.demo;
  if (demo !== undefined) {
    lines.push(
      "",
      `  token endpoint  ${sandbox.url}/oauth2/v2.0/token`,
      `  client_id       ${demo.merchant.clientId}`,
      `  client_secret   ${demo.merchant.clientSecret}`,
      `  scope           ${demo.merchant.scope}`,
      `  storeId         ${demo.merchant.storeId}`,
      "",
      "  customer tokens (EUR):",
      `    active           ${demo.tokens.active.customerToken}`,
      `    pending review   ${demo.tokens.pendingReview.customerToken}`,
      `    revoked          ${demo.tokens.revoked.customerToken}`,
      `    no funds         ${demo.tokens.noFunds.customerToken}`,
      `    needs challenge  ${demo.tokens.needsChallenge.customerToken}`,
    );
  }
  lines.push(
    "",
    `  control routes  ${sandbox.url}/sandbox/* (test-only, no authentication)`,
    "  Ctrl-C to stop",
  );
  console.log(lines.join("\n"));

  const stop = () => {
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
