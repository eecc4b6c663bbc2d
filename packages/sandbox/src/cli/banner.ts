import type { SandboxServer } from "../server.js";

// What the CLI prints at start: everything a user needs to point a shop at the sandbox and drive it,
// so nobody has to guess the demo merchant's id for POST /sandbox/webhooks.

export function startBanner(sandbox: SandboxServer): string {
  const { url } = sandbox;
  const lines = [`Purchase Authorization Service sandbox listening on ${url}`];
  const demo = sandbox.demo;
  if (demo !== undefined) {
    const { merchant, tokens, webhooks } = demo;
    lines.push(
      "",
      `  token endpoint  ${url}/oauth2/v2.0/token`,
      `  merchantId      ${merchant.merchantId}`,
      `  client_id       ${merchant.clientId}`,
      `  client_secret   ${merchant.clientSecret}`,
      `  scope           ${merchant.scope}`,
      `  storeId         ${merchant.storeId}`,
      "",
      "  customer tokens (EUR):",
      `    active           ${tokens.active.customerToken}`,
      `    pending review   ${tokens.pendingReview.customerToken}`,
      `    revoked          ${tokens.revoked.customerToken}`,
      `    no funds         ${tokens.noFunds.customerToken}`,
      `    needs challenge  ${tokens.needsChallenge.customerToken}`,
      "",
    );
    if (webhooks === undefined) {
      lines.push(
        "  webhooks        none yet: start with --webhook-url <url>, or POST /sandbox/webhooks (below)",
      );
    } else {
      lines.push(
        ...webhooks.urls.map(
          (hook, index) => `  ${index === 0 ? "webhooks       " : "               "} ${hook}`,
        ),
        `  signed with     ${webhooks.secrets.join(", ")}`,
      );
    }
    lines.push(
      `                  (at most ${sandbox.options.webhookConcurrency} deliveries in flight per URL)`,
    );
  }
  const merchantId = demo?.merchant.merchantId ?? "<merchantId>";
  const route = (method: string, path: string, body: string, what: string) =>
    `    ${method.padEnd(6)} ${url}${path}${body === "" ? "" : `  ${body}`}\n             ${what}`;
  lines.push(
    "",
    "  control routes (test-only, no authentication; JSON bodies):",
    route("GET", "/sandbox/clock", "", "the virtual time"),
    route(
      "POST",
      "/sandbox/clock/advance",
      '{"ms":3600000}',
      "move it forward; due attempts and redeliveries run",
    ),
    route(
      "POST",
      "/sandbox/faults",
      '{"kind":"unavailable","count":1}',
      "inject a fault (GET lists them, DELETE clears them)",
    ),
    route(
      "POST",
      "/sandbox/webhooks",
      `{"merchantId":"${merchantId}","urls":["http://127.0.0.1:3000/payments/webhooks"],"secrets":["whsec-local-demo"]}`,
      "register webhook receivers",
    ),
    route(
      "POST",
      "/sandbox/webhook-delivery",
      '{"duplicate":true,"outOfOrder":true}',
      "deliver twice, newest first",
    ),
    route("GET", "/sandbox/webhook-deliveries", "", "every POST made and how it ended"),
    route("POST", "/sandbox/reset", "", "forget everything (the demo data and its webhooks come back)"),
    "",
    "  Ctrl-C to stop",
  );
  return lines.join("\n");
}
