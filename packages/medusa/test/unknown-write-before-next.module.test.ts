import { expect, it, vi } from "vitest";
import { syncProviderTests } from "./support/sync-provider-tests";

// A capture or refund whose answer did not come in time may still be applied by the service after
// the provider gave up (Medusa then removes its row). The next capture or refund of the order read
// the service before that happened and sent its whole difference: the service moved both, more than
// Medusa asked for in total. Found by a review. Now the provider keeps the write whose outcome is
// unknown and settles it (the same request, the same key) before it sends anything else for the
// order: while the service still runs it, the next write is refused with nothing sent.

const LATENCY_MS = 2_500;

syncProviderTests(
  "unknown-write-before-next",
  (t) => {
    const { payment } = t;

    async function recorded(paymentId: string) {
      const stored = await payment.retrievePayment(paymentId, { relations: ["captures", "refunds"] });
      const sum = (rows: Array<{ amount: unknown }> | undefined) =>
        (rows ?? []).reduce((total, row) => total + Number(row.amount), 0).toFixed(2);
      return { captured: sum(stored.captures), refunded: sum(stored.refunds) };
    }

    /** The service takes `path`'s next write, then runs it LATENCY_MS later: after the provider gave up. */
    function slowWrite(path: string): void {
      t.sandbox().injectFault({ kind: "latency", match: { method: "POST", path }, latencyMs: LATENCY_MS });
    }

    /** Waits (real time) until the service applied a `type` of `amount` to the order. */
    async function applied(orderId: string, type: "capture" | "refund", amount: string): Promise<void> {
      await vi.waitFor(
        () => {
          const operations = t.serviceOrder(orderId)?.operations ?? [];
          expect(operations.some((op) => op.type === type && op.amount === amount)).toBe(true);
        },
        { timeout: LATENCY_MS * 4, interval: 100 },
      );
    }

    /** The write of unknown outcome the provider keeps on the payment (its metadata), if any. */
    async function keptWrite(paymentId: string): Promise<unknown> {
      const { rows } = await t.pg().raw("select metadata from payment where id = ?", [paymentId]);
      const metadata = (rows[0] as { metadata?: Record<string, unknown> | null } | undefined)?.metadata;
      return metadata?.purchase_auth_unknown_write ?? undefined;
    }

    const outcomeOf = (write: Promise<unknown>) =>
      write.then(
        () => "done",
        (error: Error) => error.message,
      );

    it("a capture beside an earlier one still running at the service waits for it; the total is what Medusa records", async () => {
      const { paymentId, orderId } = await t.authorizedPayment(100);
      slowWrite(`/manage/orders/${orderId}/capture`);
      await expect(payment.capturePayment({ payment_id: paymentId, amount: 30 })).rejects.toThrow();

      // The service still runs the first capture: nothing may be sent for the second one yet.
      const beside = await outcomeOf(payment.capturePayment({ payment_id: paymentId, amount: 50 }));
      expect(beside).toMatch(/an earlier capture of this order .* nothing was sent for this one/);

      await applied(orderId, "capture", "30.00");
      await payment.capturePayment({ payment_id: paymentId, amount: 50 });
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "50.00" });
      expect(await recorded(paymentId)).toEqual({ captured: "50.00", refunded: "0.00" });
      const captures = t.serviceOrder(orderId)!.operations.filter((op) => op.type === "capture");
      expect(captures.map((op) => op.amount)).toEqual(["30.00", "20.00"]);
    });

    it("a refund beside an earlier one still running at the service waits for it; the total is what Medusa records", async () => {
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await payment.capturePayment({ payment_id: paymentId });
      slowWrite(`/manage/orders/${orderId}/refund`);
      await expect(payment.refundPayment({ payment_id: paymentId, amount: 30 })).rejects.toThrow();

      const beside = await outcomeOf(payment.refundPayment({ payment_id: paymentId, amount: 50 }));
      expect(beside).toMatch(/an earlier refund of this order .* nothing was sent for this one/);

      await applied(orderId, "refund", "30.00");
      await payment.refundPayment({ payment_id: paymentId, amount: 50 });
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "100.00", refundedAmount: "50.00" });
      expect(await recorded(paymentId)).toEqual({ captured: "100.00", refunded: "50.00" });
    });

    it("a capture whose answer was lost is settled by the next write, which then sends only what is missing", async () => {
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await t.answerLost(() => payment.capturePayment({ payment_id: paymentId, amount: 30 }));
      expect(await keptWrite(paymentId)).toMatchObject({ operation: "orders.capture" });
      await payment.capturePayment({ payment_id: paymentId, amount: 50 });
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "50.00" });
      expect(await recorded(paymentId)).toEqual({ captured: "50.00", refunded: "0.00" });
      // Settled: the write kept for it is gone from the payment.
      expect(await keptWrite(paymentId)).toBeUndefined();
    });
  },
  { extra: { timeoutMs: 1_000 } },
);
