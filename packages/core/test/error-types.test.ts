import { describe, expect, expectTypeOf, it } from "vitest";
import { DeclinedError, NotFoundError, PurchaseAuthError, ServiceUnavailableError } from "../src/index.js";

describe("error kinds", () => {
  it("are told apart by isInstance, also across copies of the package (Symbol.for marker)", () => {
    const declined = new DeclinedError("declined", {
      status: 422,
      reasons: [{ reason: "TOKEN_REVOKED", message: "" }],
    });
    expect(DeclinedError.isInstance(declined)).toBe(true);
    expect(PurchaseAuthError.isInstance(declined)).toBe(true);
    expect(NotFoundError.isInstance(declined)).toBe(false);
    // A copy from another install: a plain object carrying the same global marker.
    const copy = Object.defineProperty(new Error("x"), Symbol.for("@purchase-auth/core.error"), {
      value: "DeclinedError",
    });
    expect(DeclinedError.isInstance(copy)).toBe(true);
    expect(declined.name).toBe("DeclinedError");
    expect(declined).toMatchObject({ reason: "TOKEN_REVOKED", outcome: "refused", retry: "no", status: 422 });
  });

  it("narrow to distinct types, so an else branch is not `never`", () => {
    const value: unknown = new ServiceUnavailableError("down", { status: 503 });
    if (DeclinedError.isInstance(value)) {
      expectTypeOf(value).toEqualTypeOf<DeclinedError>();
    } else if (ServiceUnavailableError.isInstance(value)) {
      expectTypeOf(value.name).toEqualTypeOf<"ServiceUnavailableError">();
      // Nothing was sent: try again later, even without a reason entry.
      expect(value).toMatchObject({ outcome: "not_sent", retry: "new-attempt" });
    } else {
      throw new Error("expected a ServiceUnavailableError");
    }
  });
});

describe("retry advice", () => {
  it("same-key only on unknown outcomes; new-attempt only where nothing was done and trying again may work", async () => {
    const {
      AbortedError,
      AuthenticationError,
      ConfigurationError,
      IdempotencyWindowPassedError,
      OutcomeUnknownError,
      ValidationError,
      outcomeOf,
    } = await import("../src/index.js");
    const key = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";
    const write = {
      operation: "orders.capture" as const,
      method: "POST" as const,
      path: "/x",
      idempotencyKey: key,
      firstSentAt: "2026-01-01T00:00:00.000Z",
    };
    const decline = (reason: string) =>
      new DeclinedError("d", { status: 422, reasons: [{ reason, message: "" }] });
    const cases: Array<[PurchaseAuthError, string, string]> = [
      [new OutcomeUnknownError("u", { write }), "unknown", "same-key"],
      [
        new IdempotencyWindowPassedError("w", { idempotencyKey: key, firstSentAt: new Date(0) }),
        "unknown",
        "no",
      ],
      [decline("PAYMENT_FAILED"), "refused", "new-attempt"],
      [decline("SERVICE_UNAVAILABLE"), "refused", "new-attempt"],
      [decline("TOKEN_REVOKED"), "refused", "no"],
      [new ServiceUnavailableError("down"), "not_sent", "new-attempt"],
      [new ServiceUnavailableError("429", { status: 429, outcome: "refused" }), "refused", "new-attempt"],
      [new AbortedError("stop"), "not_sent", "new-attempt"],
      [new AuthenticationError("creds", { outcome: "not_sent" }), "not_sent", "no"],
      [new ValidationError([]), "not_sent", "no"],
      [new ConfigurationError("scope", "bad"), "not_sent", "no"],
    ];
    for (const [error, outcome, retry] of cases) {
      expect({ name: error.name, outcome: outcomeOf(error), retry: error.retry }).toEqual({
        name: error.name,
        outcome,
        retry,
      });
    }
    expect(outcomeOf(new TypeError("a bug"))).toBe("unknown");
  });
});
