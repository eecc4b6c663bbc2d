import { describe, expect, it } from "vitest";
import { PaymentModuleRecords } from "../src/providers/purchase-auth/payment-module-records";

/** Records whose PostgreSQL connection answers every statement with `answer`. */
function recordsWhoseStatements(answer: () => Promise<{ rows: unknown[] }>) {
  const trx = { raw: answer, transaction: async () => undefined };
  return new PaymentModuleRecords({
    __pg_connection__: { raw: answer, transaction: async (work: (t: unknown) => unknown) => await work(trx) },
  });
}

describe("PaymentModuleRecords.mergeSessionData", () => {
  it("answers undefined only when the session does not exist", async () => {
    const missing = recordsWhoseStatements(async () => ({ rows: [] }));
    await expect(missing.mergeSessionData("payses_1", { state: "authorized" })).resolves.toBeUndefined();
  });

  it("throws any other failure, so Medusa retries the webhook", async () => {
    const down = recordsWhoseStatements(async () => {
      throw new Error("connection terminated");
    });
    await expect(down.mergeSessionData("payses_1", { state: "authorized" })).rejects.toThrow(
      /connection terminated/,
    );
  });
});
