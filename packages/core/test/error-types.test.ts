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
    expect(declined).toMatchObject({ reason: "TOKEN_REVOKED", retryable: false, status: 422 });
  });

  it("narrow to distinct types, so an else branch is not `never`", () => {
    const value: unknown = new ServiceUnavailableError("down", { status: 503 });
    if (DeclinedError.isInstance(value)) {
      expectTypeOf(value).toEqualTypeOf<DeclinedError>();
    } else if (ServiceUnavailableError.isInstance(value)) {
      expectTypeOf(value.name).toEqualTypeOf<"ServiceUnavailableError">();
      expect(value.retryable).toBe(true); // repeat with the same key, even without a reason entry
    } else {
      throw new Error("expected a ServiceUnavailableError");
    }
  });
});
