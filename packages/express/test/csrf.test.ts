import { describe, expect, it, vi } from "vitest";
import {
  type CallOptions,
  call,
  charge,
  type ShopApp,
  type ShopData,
  staffOnly,
  useShops,
} from "./support/shop.js";

// Cross-site request forgery: another site can make a signed-in visitor's browser POST an HTML form
// (application/x-www-form-urlencoded, multipart/form-data or text/plain) or a `fetch` in no-cors
// mode (text/plain, or no body at all), and the browser adds the app's cookies. None of these can
// say Content-Type: application/json, so every state-changing route requires exactly that, even
// with an empty body, and refuses anything else with 415 before any of the app's hooks runs.

const shops = useShops();
const { shop } = shops;

const UNSUPPORTED = {
  type: "urn:purchase-auth:problem:unsupported-media-type",
  title: "Unsupported media type",
  status: 415,
  detail: "This request must be sent with Content-Type: application/json, even when it has no body.",
};

/** What a cross-site page can make a browser send, for a body of `fields`. */
function crossSiteRequests(fields: Record<string, string>): Array<[string, CallOptions]> {
  const form = new URLSearchParams(fields).toString();
  const boundary = "----csrf-test-boundary";
  const multipart = `${Object.entries(fields)
    .map(
      ([name, value]) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
    )
    .join("")}--${boundary}--\r\n`;
  return [
    [
      "a form-encoded POST",
      { rawBody: form, headers: { "content-type": "application/x-www-form-urlencoded" } },
    ],
    ["an empty POST without a content type", { rawBody: "" }],
    ["a POST without a body or a content type", {}],
    [
      "an empty form-encoded POST",
      { rawBody: "", headers: { "content-type": "application/x-www-form-urlencoded" } },
    ],
    [
      "a multipart form POST",
      { rawBody: multipart, headers: { "content-type": `multipart/form-data; boundary=${boundary}` } },
    ],
    [
      "JSON sent as text/plain (a form with enctype text/plain, or fetch in no-cors mode)",
      { rawBody: JSON.stringify(fields), headers: { "content-type": "text/plain;charset=UTF-8" } },
    ],
    [
      "text/plain with an application/json parameter",
      { rawBody: JSON.stringify(fields), headers: { "content-type": "text/plain; x=application/json" } },
    ],
  ];
}

/** A manual-capture charge, authorized synchronously: its order can be captured, cancelled, refunded. */
async function authorizedCharge(data: ShopData, app: ShopApp) {
  const customer = data.customer();
  const reply = await charge(app, customer, { cartId: data.cart(customer), captureMode: "Manual" });
  expect(reply.json).toMatchObject({ status: "authorized", captureMode: "Manual" });
  return { customer, id: String(reply.json.authorizationId) };
}

describe("CSRF: state-changing routes take application/json only", () => {
  it("capture, cancel and refund refuse anything but JSON with 415, before authorizeMerchant; nothing changes", async () => {
    const authorizeMerchant = vi.fn(staffOnly);
    const { data, app } = await shop({ allowedCaptureModes: ["Manual"], authorizeMerchant });
    const { id } = await authorizedCharge(data, app);
    // Captured in part, so that capture, cancel and refund would each have something to do.
    const part = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { amount: "10.00", sequence: 1 },
    });
    expect(part.json.order).toMatchObject({ status: "PartActivated", capturedAmount: "10.00" });
    authorizeMerchant.mockClear();

    const sandbox = shops.sandbox();
    const orderBefore = structuredClone(sandbox.orders({ authorizationId: id }));
    const authorizationsBefore = structuredClone(
      sandbox.authorizations({ merchantId: data.merchant.merchantId }),
    );
    const chargeBefore = await app.router.store.findByAuthorizationId(id);

    for (const operation of ["capture", "cancel", "refund"]) {
      for (const [name, options] of crossSiteRequests({ amount: "5.00" })) {
        // The merchant's own browser, with their session (here: the staff header), tricked by another site.
        const reply = await call(app, "POST", `/charges/${id}/${operation}`, { merchant: true, ...options });
        expect(reply.status, `${operation}: ${name}`).toBe(415);
        expect(reply.headers["content-type"]).toMatch(/^application\/problem\+json/);
        expect(reply.json, `${operation}: ${name}`).toEqual(UNSUPPORTED);
      }
    }

    expect(authorizeMerchant).not.toHaveBeenCalled();
    await sandbox.settle();
    expect(sandbox.orders({ authorizationId: id })).toEqual(orderBefore);
    expect(sandbox.orders({ authorizationId: id })[0]).toMatchObject({
      status: "PartActivated",
      capturedAmount: "10.00",
      refundedAmount: "0.00",
    });
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toEqual(authorizationsBefore);
    expect(await app.router.store.findByAuthorizationId(id)).toEqual(chargeBefore);
  });

  it("POST /charges refuses anything but JSON with 415, before resolveCustomer; nothing is charged or stored", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const cartId = data.cart(customer);
    const resolveCustomer = vi.spyOn(data.customers, "get");

    for (const [name, options] of crossSiteRequests({ cartId })) {
      const reply = await call(app, "POST", "/charges", { customer, ...options });
      expect(reply.status, name).toBe(415);
      expect(reply.json, name).toEqual(UNSUPPORTED);
    }

    expect(resolveCustomer).not.toHaveBeenCalled();
    await shops.sandbox().settle();
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toEqual([]);
    expect(shops.sandbox().orders({ merchantId: data.merchant.merchantId })).toEqual([]);
    expect(await app.router.store.findByReference(data.referenceOf(cartId))).toBeUndefined();
  });

  it("application/json is accepted with parameters and in any letter case, an empty body included", async () => {
    const { data, app } = await shop({ allowedCaptureModes: ["Manual"], authorizeMerchant: staffOnly });
    const customer = data.customer();
    const paid = await call(app, "POST", "/charges", {
      customer,
      rawBody: JSON.stringify({ cartId: data.cart(customer), captureMode: "Manual" }),
      headers: { "content-type": "Application/JSON; charset=utf-8" },
    });
    expect(paid.status).toBe(201);
    const cancel = await call(app, "POST", `/charges/${paid.json.authorizationId}/cancel`, {
      merchant: true,
      rawBody: "",
      headers: { "content-type": "application/json" },
    });
    expect(cancel.status).toBe(200);
    expect(cancel.json).toMatchObject({
      status: "cancelled",
      operation: { name: "cancel", outcome: "done" },
    });
  });

  it("the webhook route is not affected: it is verified by its signature, whatever its content type", async () => {
    const { app } = await shop();
    // Unsigned, so refused, but by verification (400), not by media type.
    const reply = await call(app, "POST", "/webhooks", {
      rawBody: "{}",
      headers: { "content-type": "text/plain" },
    });
    expect(reply.status).toBe(400);
    expect(reply.json.type).toBe("urn:purchase-auth:problem:invalid-webhook");
  });
});
