import { randomBytes } from "node:crypto";
import type { PurchaseAuthClientOptions } from "@purchase-auth/core";
import { DEMO, type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import type { DemoClock } from "./shop-context.js";

// With no service configured, the shop starts the sandbox in its own process: the simulated
// Purchase Authorization Service with its demo merchant and demo customer tokens (DEMO), on
// 127.0.0.1 and a free port. Nothing to install or configure, nothing real charged.

export interface EmbeddedSandbox {
  sandbox: SandboxServer;
  /** The demo merchant's API credentials. */
  clientOptions: PurchaseAuthClientOptions;
  /** A fresh secret for this run, given to both the sandbox and the middleware. */
  webhookSecret: string;
  clock: DemoClock;
  /** Tells the sandbox where to deliver the demo merchant's webhooks. */
  registerWebhookUrl(url: string): void;
}

export async function startEmbeddedSandbox(): Promise<EmbeddedSandbox> {
  const sandbox = await startSandbox({ demo: true, port: 0 });
  const merchant = sandbox.demo?.merchant;
  if (!merchant) throw new Error("The sandbox started without its demo data");
  const webhookSecret = randomBytes(32).toString("hex");
  return {
    sandbox,
    clientOptions: {
      baseUrl: sandbox.url,
      clientId: DEMO.clientId,
      clientSecret: DEMO.clientSecret,
      scope: merchant.scope,
    },
    webhookSecret,
    clock: { advance: (ms) => void sandbox.advanceClock(ms), now: () => sandbox.now() },
    registerWebhookUrl(url) {
      sandbox.setWebhooks({ merchantId: DEMO.merchantId, urls: [url], secrets: [webhookSecret] });
    },
  };
}
