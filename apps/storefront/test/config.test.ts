import { DEMO, startSandbox } from "@purchase-auth/sandbox";
import { describe, expect, it } from "vitest";
import { startupBanner } from "../src/banner.js";
import { ConfigError, loadConfig } from "../src/config.js";
import { startStorefront } from "../src/storefront.js";
import { ShopClient } from "./support/shop-client.js";
import { startTestStorefront } from "./support/storefront.js";

const SERVICE = {
  PURCHASE_AUTH_BASE_URL: "https://api.example.test",
  PURCHASE_AUTH_CLIENT_ID: "client-id",
  PURCHASE_AUTH_CLIENT_SECRET: "client-secret",
  PURCHASE_AUTH_SCOPE: "api://example/.default",
  PURCHASE_AUTH_WEBHOOK_SECRET: "whsec-1",
};

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("loadConfig accepted the configuration");
}

describe("configuration", () => {
  it("needs nothing: 127.0.0.1:3000 on the embedded sandbox", () => {
    expect(loadConfig({})).toEqual({ host: "127.0.0.1", port: 3000 });
    expect(loadConfig({ PORT: "8080", HOST: "0.0.0.0" })).toEqual({ host: "0.0.0.0", port: 8080 });
  });

  it("takes a service when all its variables are set", () => {
    expect(loadConfig({ ...SERVICE, PURCHASE_AUTH_WEBHOOK_SECRET: "old, new" }).service).toEqual({
      baseUrl: "https://api.example.test",
      clientId: "client-id",
      clientSecret: "client-secret",
      scope: "api://example/.default",
      webhookSecrets: ["old", "new"],
    });
  });

  it("names the missing variables when only some are set", () => {
    const error = configError({
      PURCHASE_AUTH_BASE_URL: "https://api.example.test",
      PURCHASE_AUTH_CLIENT_ID: "x",
    });
    expect(error.variable).toBe("PURCHASE_AUTH_CLIENT_SECRET");
    expect(error.message).toContain(
      "PURCHASE_AUTH_CLIENT_SECRET, PURCHASE_AUTH_SCOPE, PURCHASE_AUTH_WEBHOOK_SECRET are not set",
    );
    expect(configError({ PURCHASE_AUTH_AUTH_URL: "https://login.example.test" }).variable).toBe(
      "PURCHASE_AUTH_BASE_URL",
    );
  });

  it.each([
    [{ PORT: "http" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ ...SERVICE, PURCHASE_AUTH_BASE_URL: "api.example.test" }, "PURCHASE_AUTH_BASE_URL"],
    [{ ...SERVICE, PURCHASE_AUTH_AUTH_URL: "ftp://login.example.test" }, "PURCHASE_AUTH_AUTH_URL"],
    [{ ...SERVICE, PURCHASE_AUTH_SCOPE: "api://example" }, "PURCHASE_AUTH_SCOPE"],
    [{ ...SERVICE, PURCHASE_AUTH_WEBHOOK_SECRET: " , " }, "PURCHASE_AUTH_WEBHOOK_SECRET"],
  ])("refuses %o naming %s", (env, variable) => {
    expect(configError(env).variable).toBe(variable);
  });

  it("never repeats the client secret in an error", () => {
    const error = configError({ ...SERVICE, PURCHASE_AUTH_SCOPE: "nope" });
    expect(error.message).not.toContain("client-secret");
  });

  it("names PORT when the port is taken", async () => {
    const first = await startTestStorefront();
    try {
      const port = new URL(first.url).port;
      await expect(startStorefront(loadConfig({ PORT: port }))).rejects.toMatchObject({ variable: "PORT" });
    } finally {
      await first.close();
    }
  });
});

describe("start-up", () => {
  it("prints the address, the demo customers with what their tokens do, and the merchant sign-in", async () => {
    const running = await startTestStorefront();
    try {
      const text = startupBanner(running);
      expect(text).toContain(`running at ${running.url}`);
      expect(text).toMatch(/Alice Martin\s+•••• 0001\s+Active\s+Payments go through\./);
      expect(text).toMatch(/Chloé Dubois\s+•••• 0003\s+Revoked/);
      expect(text).toContain('user "merchant", password "demo"');
      expect(text).toContain("embedded sandbox");
    } finally {
      await running.close();
    }
  });

  it("talks to the configured service instead of the embedded sandbox", async () => {
    // A sandbox started on its own, standing in for "your" service.
    const service = await startSandbox({ demo: true, port: 0 });
    const running = await startStorefront(
      loadConfig({
        PORT: "0",
        PURCHASE_AUTH_BASE_URL: service.url,
        PURCHASE_AUTH_CLIENT_ID: DEMO.clientId,
        PURCHASE_AUTH_CLIENT_SECRET: DEMO.clientSecret,
        PURCHASE_AUTH_SCOPE: service.demo!.merchant.scope,
        PURCHASE_AUTH_WEBHOOK_SECRET: "a-secret-shared-with-the-service",
      }),
    );
    try {
      expect(running.embedded).toBeUndefined();
      expect(startupBanner(running)).toContain(`register ${running.webhookUrl} as the webhook URL`);
      service.setWebhooks({
        merchantId: DEMO.merchantId,
        urls: [running.webhookUrl],
        secrets: ["a-secret-shared-with-the-service"],
      });

      const shopper = new ShopClient(running.url);
      await shopper.signIn("alice");
      await shopper.addToCart("beans-espresso-1kg");
      expect((await shopper.open("/checkout")).text).not.toContain("Advance the sandbox clock");
      const charge = await shopper.postJson("/payments/charges", {
        cartId: await shopper.cartId(),
        captureMode: "Manual",
        timing: "asap",
      });
      expect(charge.json.status).toBe("pending");
      await service.settle();
      const status = await shopper.get(`/payments/charges/${charge.json.authorizationId}`);
      expect(status.json.status).toBe("authorized");
      expect((await shopper.postJson("/demo/sandbox-clock", {})).status).toBe(404); // no demo clock here
    } finally {
      await running.close();
      await service.close();
    }
  });
});
