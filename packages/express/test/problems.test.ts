import {
  AuthenticationError,
  ConfigurationError,
  DeclinedError,
  ERROR_REASONS,
  IdempotencyError,
  InvalidRequestError,
  NotFoundError,
  OrderStateError,
  OutcomeUnknownError,
  ServiceUnavailableError,
  UnexpectedResponseError,
  ValidationError,
  WebhookVerificationError,
} from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { HttpProblem, problemFromError, SHOPPER_MESSAGES, shopperMessageFor } from "../src/index.js";

// Every error becomes a problem a shop can show: status, type, and a detail with no internals.

const reason = (name: string) => ({ reasons: [{ reason: name, message: `service text for ${name}` }] });

describe("shopper messages", () => {
  it("exist for every error reason of the specification and the supplement", () => {
    for (const name of Object.keys(ERROR_REASONS)) {
      expect(SHOPPER_MESSAGES[name as keyof typeof SHOPPER_MESSAGES]).toMatch(/^[A-Z].+\.$/);
    }
    expect(shopperMessageFor("SOMETHING_NEW")).toMatch(/could not be completed/);
    expect(shopperMessageFor(undefined)).toMatch(/could not be completed/);
  });
});

describe("problemFromError", () => {
  it.each([
    [new DeclinedError("declined", { status: 422, ...reason("TOKEN_REVOKED") }), 422, "payment-declined"],
    [new NotFoundError("not found", { status: 404 }), 422, "payment-method-not-found"],
    [new OrderStateError("state", { status: 422, ...reason("INVALID_ORDER_STATE") }), 409, "order-state"],
    [
      new OutcomeUnknownError("socket hang up", {
        write: {
          operation: "authorizations.create",
          method: "POST",
          path: "/purchase/authorizations",
          idempotencyKey: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
          firstSentAt: new Date().toISOString(),
        },
      }),
      503,
      "payment-confirming",
    ],
    [new ServiceUnavailableError("503", { status: 503 }), 503, "service-unavailable"],
    [
      new IdempotencyError("expired", { status: 422, ...reason("IDEMPOTENCY_RESPONSE_EXPIRED") }),
      409,
      "payment-unconfirmed",
    ],
    [
      new AuthenticationError("invalid_client: bad secret", { oauthError: "invalid_client" }),
      502,
      "payments-unavailable",
    ],
    [new UnexpectedResponseError("HTTP 418 from the service"), 502, "payments-unavailable"],
    [new ConfigurationError("scope", "Invalid option scope"), 500, "internal"],
    [new WebhookVerificationError("invalid_signature", "no match"), 400, "invalid-webhook"],
    [new InvalidRequestError("400", { status: 400, ...reason("INVALID_REQUEST") }), 400, "invalid-request"],
  ])("%s → %i %s", (error, status, slug) => {
    const problem = problemFromError(error);
    expect(problem.status).toBe(status);
    expect(problem.type).toBe(`urn:purchase-auth:problem:${slug}`);
    expect(problem.detail).not.toContain("service text");
    expect(problem.detail).not.toContain(error.message);
    // Nothing the service wrote reaches the shopper, not even in the field errors.
    expect(JSON.stringify(problem)).not.toContain("service text");
    expect(JSON.stringify(problem)).not.toMatch(/stack|bad secret/);
  });

  it("a service 400 names the field and rule in our own words, never the service's message", () => {
    const error = new InvalidRequestError("400", {
      status: 400,
      reasons: [
        {
          reason: "INVALID_REQUEST",
          message: "<script>echo</script>",
          field: "order.items[0].vat",
          rule: "max",
        },
      ],
    });
    expect(problemFromError(error).errors).toEqual([
      {
        field: "order.items[0].vat",
        message: "order.items[0].vat was refused by the payment service (rule max)",
      },
    ]);
  });

  it("declines carry the reason, whether retrying may help, and the shopper message", () => {
    expect(problemFromError(new DeclinedError("x", { status: 422, ...reason("PAYMENT_FAILED") }))).toEqual({
      type: "urn:purchase-auth:problem:payment-declined",
      title: "Payment failed",
      status: 422,
      detail: SHOPPER_MESSAGES.PAYMENT_FAILED,
      reason: "PAYMENT_FAILED",
      retryable: true,
    });
  });

  it("a ValidationError names every field", () => {
    const error = new ValidationError([
      { path: "order.items[0].vat", rule: "max", message: "order.items[0].vat must be at most 100" },
      {
        path: "order.currency",
        rule: "currency",
        message: "order.currency must be an ISO 4217 currency code",
      },
    ]);
    expect(problemFromError(error)).toMatchObject({
      status: 400,
      errors: [
        { field: "order.items[0].vat", message: "order.items[0].vat must be at most 100" },
        { field: "order.currency", message: "order.currency must be an ISO 4217 currency code" },
      ],
    });
  });

  it("anything else is a 500 that says nothing about its cause", () => {
    const problem = problemFromError(new Error("connect ECONNREFUSED 10.0.0.5:5432 password=hunter2"));
    expect(problem).toEqual({
      type: "urn:purchase-auth:problem:internal",
      title: "Internal error",
      status: 500,
      detail: "Something went wrong on our side. Please try again later.",
    });
    expect(problemFromError("a string")).toEqual(problem);
    expect(problemFromError(null)).toEqual(problem);
  });

  it("an HttpProblem is answered as it is", () => {
    const thrown = new HttpProblem({ status: 409, title: "Empty cart", detail: "Your cart is empty." });
    expect(problemFromError(thrown)).toEqual({
      type: "about:blank",
      status: 409,
      title: "Empty cart",
      detail: "Your cart is empty.",
    });
  });
});
