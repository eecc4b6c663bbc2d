import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEMO } from "../src/index.js";
import { startReceiver, type WebhookReceiver } from "./helpers.js";

// The CLI as a user runs it: the committed bin launcher in a child process (it loads dist/, so this
// needs a build, which `pnpm test` does first). Everything is checked over HTTP and on stdout.

const BIN = fileURLToPath(new URL("../bin/purchase-auth-sandbox.js", import.meta.url));
const DIST = fileURLToPath(new URL("../dist/cli.js", import.meta.url));

interface Started {
  child: ChildProcess;
  banner: string;
  url: string;
}

const children: ChildProcess[] = [];
const receivers: WebhookReceiver[] = [];

beforeAll(() => {
  if (!existsSync(DIST)) throw new Error("packages/sandbox/dist/cli.js is missing: run `pnpm build` first");
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  }
  for (const receiver of receivers.splice(0)) await receiver.close();
});

/** Starts the CLI and resolves with its banner once it is printed whole. */
function startCli(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, [BIN, "--port", "0", ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      if (!stdout.includes("Ctrl-C to stop")) return;
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url === undefined) reject(new Error(`no URL in the banner:\n${stdout}`));
      else resolve({ child, banner: stdout, url });
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.once("exit", (code) => reject(new Error(`the CLI exited with ${code}: ${stderr}`)));
  });
}

/** Runs the CLI to its end; its exit code and stderr. */
function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, "--port", "0", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stderr })));
}

async function post(url: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: "POST",
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
}

/** Moves a demo token Pending → Active (one customer-token.status-changed event) and waits for delivery. */
async function emitOneEvent(url: string): Promise<void> {
  const changed = await post(url, `/sandbox/customer-tokens/${DEMO.tokens.pendingReview}/status`, {
    status: "Active",
  });
  expect(changed.status).toBe(200);
  expect((await post(url, "/sandbox/settle")).status).toBe(200);
}

function signedWith(webhook: WebhookReceiver["received"][number], secret: string): boolean {
  const timestamp = String(webhook.headers["service-webhook-timestamp"]);
  const expected = createHmac("sha256", secret).update(`${timestamp}.${webhook.rawBody}`).digest("hex");
  return String(webhook.headers["service-webhook-signature"]).split(",").includes(`v1=${expected}`);
}

async function receiver(): Promise<WebhookReceiver> {
  const started = await startReceiver();
  receivers.push(started);
  return started;
}

describe("the purchase-auth-sandbox CLI", () => {
  it("prints the demo merchant id and the control routes a user needs", async () => {
    const { banner, url } = await startCli([]);
    expect(banner).toContain(`merchantId      ${DEMO.merchantId}`);
    expect(banner).toContain(`client_id       ${DEMO.clientId}`);
    for (const path of [
      "/sandbox/clock",
      "/sandbox/clock/advance",
      "/sandbox/faults",
      "/sandbox/webhooks",
      "/sandbox/reset",
    ]) {
      expect(banner).toContain(`${url}${path}`);
    }
    expect(banner).toContain(`"merchantId":"${DEMO.merchantId}"`);
    expect(banner).toContain("none yet: start with --webhook-url");
  });

  it("delivers the demo merchant's events to --webhook-url, signed with --webhook-secret, also after a reset", async () => {
    const hooks = await receiver();
    const { banner, url } = await startCli(["--webhook-url", hooks.url, "--webhook-secret", "s3cret"]);
    expect(banner).toContain(`webhooks        ${hooks.url}`);
    expect(banner).toContain("signed with     s3cret");

    await emitOneEvent(url);
    expect(hooks.received.map((webhook) => webhook.event.type)).toEqual(["customer-token.status-changed"]);
    expect(hooks.received[0]?.event.data).toMatchObject({ customerToken: DEMO.tokens.pendingReview });
    expect(signedWith(hooks.received[0]!, "s3cret")).toBe(true);

    expect((await post(url, "/sandbox/reset")).status).toBe(200);
    await emitOneEvent(url);
    expect(hooks.received).toHaveLength(2);
  });

  it("takes the receivers from the environment, signed with the demo secret by default", async () => {
    const first = await receiver();
    const second = await receiver();
    const { banner, url } = await startCli([], {
      PURCHASE_AUTH_SANDBOX_WEBHOOK_URLS: `${first.url}, ${second.url}`,
      PURCHASE_AUTH_SANDBOX_WEBHOOK_CONCURRENCY: "3",
    });
    expect(banner).toContain(`signed with     ${DEMO.webhookSecret}`);
    expect(banner).toContain("at most 3 deliveries in flight per URL");
    await emitOneEvent(url);
    for (const hooks of [first, second]) {
      expect(hooks.received).toHaveLength(1);
      expect(signedWith(hooks.received[0]!, DEMO.webhookSecret)).toBe(true);
    }
  });

  it("refuses flags that cannot work, with a message and exit code 1", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["--no-demo", "--webhook-url", "http://127.0.0.1:9/"], /cannot go with --no-demo/],
      [["--webhook-secret", "s"], /needs --webhook-url/],
      [["--webhook-url", "ftp://example.com/"], /not an http\(s\) URL/],
      [["--webhook-url", "http://127.0.0.1:9/", "--webhook-concurrency", "0"], /--webhook-concurrency/],
      [["--unknown"], /unknown/i],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    results.forEach(({ code, stderr }, index) => {
      expect(code).toBe(1);
      expect(stderr).toMatch(cases[index]![1]);
    });
  });
});
