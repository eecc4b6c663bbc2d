import { ConfigurationError, PurchaseAuthClient } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { MemoryChargeStore, type PurchaseAuthOptions, purchaseAuth } from "../src/index.js";

// Options are checked once, at construction; a wrong one throws naming it and what to change.

const clientOptions = {
  baseUrl: "http://127.0.0.1:4010",
  clientId: "client",
  clientSecret: "secret-value",
  scope: "api://purchase-auth-sandbox/.default",
};

const valid: PurchaseAuthOptions = {
  clientOptions,
  resolveCustomer: () => null,
  buildOrder: () => ({ reference: "order-1", currency: "EUR", items: [] }),
  webhookSecret: "whsec_test",
};

function refusal(options: Record<string, unknown>): ConfigurationError {
  try {
    purchaseAuth(options as unknown as PurchaseAuthOptions);
  } catch (error) {
    if (ConfigurationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("the options were accepted");
}

describe("options", () => {
  it("accepts a minimal configuration and returns a router with its client and store", async () => {
    const router = purchaseAuth(valid);
    expect(typeof router).toBe("function");
    expect(router.client).toBeInstanceOf(PurchaseAuthClient);
    expect(router.store).toBeInstanceOf(MemoryChargeStore);
    await router.close();
    await router.close(); // twice is fine
  });

  it.each([
    [{ resolveCustomer: undefined }, "resolveCustomer", "Invalid option resolveCustomer: is required"],
    [{ buildOrder: "cart" }, "buildOrder", "Invalid option buildOrder: must be a function"],
    [{ webhookSecret: undefined }, "webhookSecret", "Invalid option webhookSecret:"],
    [{ webhookSecret: [] }, "webhookSecret", "must hold at least one secret"],
    [{ webhookSecret: "" }, "webhookSecret", "Invalid option webhookSecret:"],
    [{ authorizeMerchant: true }, "authorizeMerchant", "must be a function (req) => boolean"],
    [{ captureMode: "auto" }, "captureMode", "Invalid option captureMode:"],
    [{ allowedTimings: ["later"] }, "allowedTimings[0]", "Invalid option allowedTimings[0]:"],
    [{ maxBodyBytes: 10 }, "maxBodyBytes", "Invalid option maxBodyBytes:"],
    [{ outcomeGraceMs: 0 }, "outcomeGraceMs", "Invalid option outcomeGraceMs:"],
    [{ resendWindowMs: 39_999 }, "resendWindowMs", "must be at least twice timeoutMs (40000)"],
    [{ resendWindowMs: 60_000, timeoutMs: 30_001 }, "resendWindowMs", "must be at least twice timeoutMs"],
    [{ outcomeGraceMs: 31 * 86_400_000 }, "outcomeGraceMs", "Invalid option outcomeGraceMs:"],
    [{ store: {} }, "store", "must implement ChargeStore"],
    [{ idempotencyNamespace: "mine" }, "idempotencyNamespace", "must be a GUID"],
    [{ liveUpdates: { pollIntervalMs: 0 } }, "liveUpdates.pollIntervalMs", "liveUpdates.pollIntervalMs"],
    [{ schedules: { nightly: ["8 hours"] } }, "schedules.nightly[0]", "Invalid option schedules.nightly[0]"],
    [{ timing: "scheduled" }, "schedules", 'the "scheduled" timing needs at least one named schedule'],
    [
      { schedules: { a: ["00.01:00:00"] }, timing: "scheduled" },
      "schedule",
      "needs the name of the schedule",
    ],
    [{ schedules: { a: ["00.01:00:00"] }, schedule: "b" }, "schedule", "must name an entry of schedules (a)"],
    [{ rateLimt: () => true }, "rateLimt", "Unknown option rateLimt: remove it or check its spelling"],
    [{ clientOptions: undefined }, "client", "give either client (a PurchaseAuthClient) or clientOptions"],
    [
      { client: new PurchaseAuthClient(clientOptions) },
      "client",
      "give either client (a PurchaseAuthClient) or clientOptions",
    ],
    [
      { clientOptions: { ...clientOptions, scope: "sandbox" } },
      "clientOptions.scope",
      "Invalid option clientOptions.scope: must have the form <SCOPE_ID>/.default",
    ],
  ])("refuses %o naming %s", (change, option, message) => {
    const error = refusal({ ...valid, ...change });
    expect(error.option).toBe(option);
    expect(error.message).toContain(message);
  });

  it("never puts the client secret in an error", () => {
    const error = refusal({ ...valid, clientOptions: { ...clientOptions, baseUrl: "ftp://x" } });
    expect(error.message).not.toContain(clientOptions.clientSecret);
  });

  it("takes a client you constructed, and does not close it", async () => {
    const client = new PurchaseAuthClient(clientOptions);
    const { clientOptions: _unused, ...rest } = valid;
    const router = purchaseAuth({ ...rest, client });
    expect(router.client).toBe(client);
    await router.close();
    await client.close(); // still ours to close
  });
});
