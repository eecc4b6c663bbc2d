import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { call, charge, createShopData, type ShopApp, staffOnly, startShopApp } from "./support/shop.js";

// The same router on Express 4 (the peer range allows it): "express" resolves to version 4 for this
// file, the router's own imports included. Express 4 neither forwards async errors to next() nor
// leaves req.body undefined; these flows cover both.

vi.mock("express", async () => import("express4" as string));

let sandbox: SandboxServer;
const apps: ShopApp[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function shop(options: Parameters<typeof startShopApp>[1] = {}) {
  const data = createShopData(sandbox);
  const app = await startShopApp(data, options);
  apps.push(app);
  return { data, app };
}

describe("on Express 4", () => {
  it("runs on express 4", async () => {
    const { createRequire } = await import("node:module");
    const express = (await import("express")).default;
    const version = createRequire(import.meta.url)("express4/package.json").version as string;
    expect(version).toMatch(/^4\./);
    expect(express).toBe((await import("express4" as string)).default);
  });

  it("charges, receives the webhooks, and answers the status", async () => {
    const { data, app } = await shop({ allowedTimings: ["asap"] });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer), timing: "asap" });
    expect(reply.status).toBe(201);
    await sandbox.settle();
    const status = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(status.json.status).toBe("captured");
    expect(app.appliedEvents).toHaveLength(2);
  });

  it("answers problems for async errors, bodies and declines", async () => {
    const { data, app } = await shop({
      maxBodyBytes: 2048,
      authorizeMerchant: staffOnly,
      allowedCaptureModes: ["Manual"],
    });
    const revoked = data.customer({ status: "Revoked" });
    const declined = await charge(app, revoked, { cartId: data.cart(revoked) });
    expect(declined.status).toBe(422);
    expect(declined.json.reason).toBe("TOKEN_REVOKED");
    expect((await charge(app, revoked, { cartId: "x".repeat(4096) })).status).toBe(413);
    expect((await call(app, "POST", "/charges", { body: { cartId: "x" } })).status).toBe(401);
    expect((await charge(app, revoked, {})).json.errors).toEqual([
      { field: "cartId", message: "cartId is required" },
    ]);
    const customer = data.customer();
    const paid = await charge(app, customer, { cartId: data.cart(customer), captureMode: "Manual" });
    expect(paid.json.status).toBe("authorized");
    const capture = await call(app, "POST", `/charges/${paid.json.authorizationId}/capture`, {
      merchant: true,
      body: { amount: "9.80", sequence: 1 },
    });
    expect(capture.json).toMatchObject({ status: "partially_captured", operation: { outcome: "done" } });
    // CSRF: an empty POST without Content-Type: application/json is refused here too.
    const empty = await call(app, "POST", `/charges/${paid.json.authorizationId}/capture`, {
      merchant: true,
      rawBody: "",
    });
    expect(empty.status).toBe(415);
    expect(empty.json.type).toBe("urn:purchase-auth:problem:unsupported-media-type");
    expect(sandbox.orders({ authorizationId: paid.json.authorizationId })[0]).toMatchObject({
      capturedAmount: "9.80",
    });
    expect((await call(app, "POST", "/webhooks", { rawBody: "{}" })).status).toBe(400);
  });
});
