import { MedusaError } from "@medusajs/framework/utils";
import { describe, expect, it } from "vitest";
import { PaymentModuleRecords } from "../src/providers/purchase-auth/payment-module-records";

function recordsFailingWith(error: Error) {
  return new PaymentModuleRecords({
    paymentSessionService: {
      retrieve: async () => {
        throw error;
      },
      update: async () => {},
    },
  });
}

describe("PaymentModuleRecords.mergeSessionData", () => {
  it("answers false only when the session does not exist", async () => {
    const missing = recordsFailingWith(new MedusaError(MedusaError.Types.NOT_FOUND, "no session"));
    await expect(missing.mergeSessionData("payses_1", { state: "authorized" })).resolves.toBe(false);
  });

  it("throws any other failure, so Medusa retries the webhook", async () => {
    const down = recordsFailingWith(new Error("connection terminated"));
    await expect(down.mergeSessionData("payses_1", { state: "authorized" })).rejects.toThrow(
      /connection terminated/,
    );
  });
});
