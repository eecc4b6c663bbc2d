import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signWebhook, verifyWebhook, WebhookVerificationError } from "../src/index.js";
import { TOKEN } from "./fixtures.js";

const SECRET = "whsec_test_secret";
const event = {
  type: "authorization.failed",
  data: {
    authorizationId: "0f8fad5b-d9cb-469f-a165-70867728950e",
    customerToken: TOKEN,
    reason: "TOKEN_REVOKED",
    attempt: 1,
  },
};

function failureOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (WebhookVerificationError.isInstance(error)) return error.failure;
    throw error;
  }
  return undefined;
}

describe("verifyWebhook", () => {
  it("returns the typed event for a valid signature", () => {
    const signed = signWebhook(event, SECRET);
    const verified = verifyWebhook(signed.body, signed.headers, SECRET);
    expect(verified.type).toBe("authorization.failed");
    if (verified.type === "authorization.failed") expect(verified.data.reason).toBe("TOKEN_REVOKED");
  });

  it("accepts a signature made independently with node:crypto, as the supplement describes", () => {
    const body = JSON.stringify({
      id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
      type: event.type,
      createdAt: "2026-11-21T10:00:00Z",
      data: event.data,
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const hex = createHmac("sha256", SECRET).update(`${timestamp}.${body}`).digest("hex");
    const headers = new Headers({
      "Service-Webhook-Id": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
      "Service-Webhook-Timestamp": String(timestamp),
      "Service-Webhook-Signature": `v1=${hex}`,
    });
    expect(verifyWebhook(Buffer.from(body), headers, SECRET).id).toBe("7c9e6679-7425-40de-944b-e07fc1f90ae7");
  });

  it("rejects a tampered body", () => {
    const signed = signWebhook(event, SECRET);
    const tampered = signed.body.replace("TOKEN_REVOKED", "TOKEN_DENIED");
    expect(failureOf(() => verifyWebhook(tampered, signed.headers, SECRET))).toBe("invalid_signature");
  });

  it("rejects the wrong secret", () => {
    const signed = signWebhook(event, SECRET);
    expect(failureOf(() => verifyWebhook(signed.body, signed.headers, "other"))).toBe("invalid_signature");
  });

  it("rejects an old (replayed) or far-future timestamp", () => {
    // The clock is given, not read: read twice, it could tick between the signing and the check, and
    // a timestamp 301 s ahead became 300 s ahead, inside the tolerance (a CI run failed so).
    const now = Math.floor(Date.now() / 1000);
    const at = { nowSeconds: now };
    const old = signWebhook(event, SECRET, { timestamp: now - 301 });
    expect(failureOf(() => verifyWebhook(old.body, old.headers, SECRET, at))).toBe(
      "timestamp_outside_tolerance",
    );
    const future = signWebhook(event, SECRET, { timestamp: now + 301 });
    expect(failureOf(() => verifyWebhook(future.body, future.headers, SECRET, at))).toBe(
      "timestamp_outside_tolerance",
    );
    for (const edge of [now - 300, now + 300]) {
      const signed = signWebhook(event, SECRET, { timestamp: edge });
      expect(verifyWebhook(signed.body, signed.headers, SECRET, at).type).toBe(event.type);
    }
    expect(verifyWebhook(old.body, old.headers, SECRET, { ...at, toleranceSeconds: 600 }).type).toBe(
      event.type,
    );
  });

  it("accepts any one valid entry during secret rotation, from either side", () => {
    const rotated = signWebhook(event, ["old-secret", "new-secret"]);
    expect(rotated.headers["service-webhook-signature"]!.split(",")).toHaveLength(2);
    expect(verifyWebhook(rotated.body, rotated.headers, "new-secret").type).toBe(event.type);
    expect(verifyWebhook(rotated.body, rotated.headers, ["new-secret", "old-secret"]).type).toBe(event.type);
    const onlyOld = signWebhook(event, "old-secret");
    expect(verifyWebhook(onlyOld.body, onlyOld.headers, ["new-secret", "old-secret"]).type).toBe(event.type);
  });

  it("rejects missing headers, a body id that differs from the header, and malformed payloads", () => {
    const signed = signWebhook(event, SECRET);
    const { "service-webhook-signature": _, ...noSignature } = signed.headers;
    expect(failureOf(() => verifyWebhook(signed.body, noSignature, SECRET))).toBe("missing_header");
    const otherId = { ...signed.headers, "service-webhook-id": "0f8fad5b-d9cb-469f-a165-70867728950e" };
    expect(failureOf(() => verifyWebhook(signed.body, otherId, SECRET))).toBe("id_mismatch");
    const bad = signWebhook({ type: "authorization.failed", data: { reason: 3 } }, SECRET);
    expect(failureOf(() => verifyWebhook(bad.body, bad.headers, SECRET))).toBe("invalid_payload");
  });

  it("reports a genuine event of an unknown type as unsupported", () => {
    const future = signWebhook({ type: "authorization.expired", data: {} }, SECRET);
    expect(failureOf(() => verifyWebhook(future.body, future.headers, SECRET))).toBe("unsupported_event");
  });

  it("honours renamed headers and event types", () => {
    const headers = { webhookId: "X-Id", webhookTimestamp: "X-Ts", webhookSignature: "X-Sig" };
    const signed = signWebhook({ ...event, type: "auth.failed" }, SECRET, { headers });
    const verified = verifyWebhook(signed.body, signed.headers, SECRET, {
      headers,
      eventTypes: { "authorization.failed": "auth.failed" },
    });
    expect(verified.type).toBe("authorization.failed");
  });
});
