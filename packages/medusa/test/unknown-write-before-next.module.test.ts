import { randomUUID } from "node:crypto";
import { PurchaseAuthClient } from "@purchase-auth/core";
import { expect, it, vi } from "vitest";
import { followServiceOrder } from "../src/workflows/follow-service";
import { syncProviderTests } from "./support/sync-provider-tests";

// A capture or refund whose answer did not come in time may still be applied by the service after
// the provider gave up (Medusa then removes its row), or may never have reached it. The next capture
// or refund of the order read the service before the first was applied and sent its whole
// difference: the service moved both, more than Medusa asked for in total (found by a review). A
// first fix settled the kept write by sending it again before any other write, which ran money
// Medusa showed as failed when it had never reached the service (found by the next review). Now the
// provider keeps the write whose outcome is unknown, and sends only its retry (the same key) until
// it can no longer run: any other capture, refund or cancel of the order is refused, nothing sent.

const LATENCY_MS = 3_000;

syncProviderTests(
  "unknown-write-before-next",
  (t) => {
    const { payment, recorded } = t;

    /** The service takes `path`'s next write, then runs it LATENCY_MS later: after the provider gave up. */
    function slowWrite(path: string, latencyMs = LATENCY_MS): void {
      t.sandbox().injectFault({ kind: "latency", match: { method: "POST", path }, latencyMs });
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

    /** The capture (refund) of unknown outcome the provider keeps on the payment (its metadata), if any. */
    async function keptWrite(paymentId: string, kind: "capture" | "refund" = "capture"): Promise<unknown> {
      const { rows } = await t.pg().raw("select metadata from payment where id = ?", [paymentId]);
      const metadata = (rows[0] as { metadata?: Record<string, unknown> | null } | undefined)?.metadata;
      return metadata?.[`purchase_auth_unknown_${kind}`] ?? undefined;
    }

    /** A capture whose every send (core's one retry too) is cut before the service reads it. */
    async function captureCut(paymentId: string, orderId: string, amount: number): Promise<void> {
      t.sandbox().injectFault({
        kind: "reset_before_processing",
        match: { method: "POST", path: `/manage/orders/${orderId}/capture` },
        count: null,
      });
      try {
        await expect(payment.capturePayment({ payment_id: paymentId, amount })).rejects.toThrow();
      } finally {
        t.sandbox().clearFaults();
      }
    }

    /** The merchant's own client, for writes made at the service outside Medusa. */
    function serviceClient(): PurchaseAuthClient {
      const { sandbox, merchant } = t.suite.state;
      return new PurchaseAuthClient({
        baseUrl: sandbox!.url,
        clientId: merchant!.clientId,
        clientSecret: merchant!.clientSecret,
        scope: merchant!.scope,
      });
    }

    const outcomeOf = (write: Promise<unknown>) =>
      write.then(
        () => "done",
        (error: Error) => error.message,
      );

    it("while a capture's outcome is unknown, only its retry is sent; another capture is refused", async () => {
      const { paymentId, orderId } = await t.authorizedPayment(100);
      slowWrite(`/manage/orders/${orderId}/capture`);
      await expect(payment.capturePayment({ payment_id: paymentId, amount: 30 })).rejects.toThrow();

      // The service still runs the first capture: nothing may be sent for another one.
      const other = await outcomeOf(payment.capturePayment({ payment_id: paymentId, amount: 50 }));
      expect(other).toMatch(/an earlier capture of this order .* is not a retry of it; nothing was sent/);
      // Its retry asks the service, which still runs it: no answer yet, and nothing else is sent.
      const retry = await outcomeOf(payment.capturePayment({ payment_id: paymentId, amount: 30 }));
      expect(retry).toMatch(/an earlier capture of this order .* has no answer from the service yet/);

      await applied(orderId, "capture", "30.00");
      expect(await outcomeOf(payment.capturePayment({ payment_id: paymentId, amount: 50 }))).toMatch(
        /is not a retry of it/,
      );
      // Its retry finds the total reached: it landed, settled. Another amount goes on.
      await payment.capturePayment({ payment_id: paymentId, amount: 30 });
      expect(await keptWrite(paymentId)).toBeUndefined();
      await payment.capturePayment({ payment_id: paymentId, amount: 20 });
      expect(await recorded(paymentId)).toEqual({ captured: "50.00", refunded: "0.00" });
      const captures = t.serviceOrder(orderId)!.operations.filter((op) => op.type === "capture");
      expect(captures.map((op) => op.amount)).toEqual(["30.00", "20.00"]);
    });

    it("while a refund's outcome is unknown, another refund is refused; its retry settles it", async () => {
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await payment.capturePayment({ payment_id: paymentId });
      slowWrite(`/manage/orders/${orderId}/refund`);
      await expect(payment.refundPayment({ payment_id: paymentId, amount: 30 })).rejects.toThrow();

      const other = await outcomeOf(payment.refundPayment({ payment_id: paymentId, amount: 50 }));
      expect(other).toMatch(/an earlier refund of this order .* is not a retry of it; nothing was sent/);

      await applied(orderId, "refund", "30.00");
      await payment.refundPayment({ payment_id: paymentId, amount: 30 });
      await payment.refundPayment({ payment_id: paymentId, amount: 20 });
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "100.00", refundedAmount: "50.00" });
      expect(await recorded(paymentId)).toEqual({ captured: "100.00", refunded: "50.00" });
    });

    it("a capture that never reached the service is not sent by a cancel, which releases the order", async () => {
      // Found by a review: settling the kept capture first sent it, and the customer was charged
      // by a cancel while Medusa showed the capture failed.
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await captureCut(paymentId, orderId, 30);
      expect(await keptWrite(paymentId)).toMatchObject({ operation: "orders.capture" });

      await payment.cancelPayment(paymentId);
      expect(t.serviceOrder(orderId)).toMatchObject({ status: "Cancelled", capturedAmount: "0.00" });
      expect(await recorded(paymentId)).toEqual({ captured: "0.00", refunded: "0.00" });
      // The capture's retry: Medusa refuses a canceled payment, and the service would (nothing left).
      await expect(payment.capturePayment({ payment_id: paymentId, amount: 30 })).rejects.toThrow(
        /has been canceled/,
      );
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "0.00" });
    });

    it("a capture whose answer was lost and whose event Medusa recorded is not captured again by its retry", async () => {
      // Found by a review: the follow settled the kept capture, and the admin's retry of the same
      // amount (as the error advised) then aimed at twice the total, under a new key: captured twice.
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await t.answerLost(() => payment.capturePayment({ payment_id: paymentId, amount: 30 }));
      await followServiceOrder(t.container(), orderId); // the service's order.captured
      expect(await recorded(paymentId)).toEqual({ captured: "30.00", refunded: "0.00" });
      const retry = await outcomeOf(payment.capturePayment({ payment_id: paymentId, amount: 30 }));
      expect(retry).toMatch(/went through, and the payment records it; nothing was sent/);
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "30.00" });
      expect(await recorded(paymentId)).toEqual({ captured: "30.00", refunded: "0.00" });
      // Another amount goes on.
      await payment.capturePayment({ payment_id: paymentId, amount: 20 });
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "50.00" });
    });

    it("a follow whose total is a kept capture's never sends that capture again", async () => {
      // Found by a review: a capture that never reached the service, then the same amount captured
      // at the service another way; the follow recording it sent the kept capture again.
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await captureCut(paymentId, orderId, 30);
      await serviceClient().orders.capture(orderId, { amount: "30.00" }, { idempotencyKey: randomUUID() });
      await followServiceOrder(t.container(), orderId);
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "30.00" });
      expect(await recorded(paymentId)).toEqual({ captured: "30.00", refunded: "0.00" });
    });

    it("a refund of unknown outcome does not take the place of a capture still on its way", async () => {
      // Found by a review: one write was kept per payment, so the refund's replaced the capture's,
      // and the next capture was sent while the first still ran (the service 100, Medusa 70).
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await payment.capturePayment({ payment_id: paymentId, amount: 50 });
      slowWrite(`/manage/orders/${orderId}/capture`);
      await expect(payment.capturePayment({ payment_id: paymentId, amount: 30 })).rejects.toThrow();
      // A refund whose answer is lost while the capture still runs.
      await t.answerLost(() => payment.refundPayment({ payment_id: paymentId, amount: 10 }));
      expect(await keptWrite(paymentId, "capture")).toMatchObject({ operation: "orders.capture" });
      expect(await keptWrite(paymentId, "refund")).toMatchObject({ operation: "orders.refund" });
      const other = await outcomeOf(payment.capturePayment({ payment_id: paymentId, amount: 20 }));
      expect(other).toMatch(/an earlier capture of this order .* is not a retry of it; nothing was sent/);
      await applied(orderId, "capture", "30.00");
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "80.00", refundedAmount: "10.00" });
    });

    it("a cancel that a capture on its way ran before does not record the payment canceled", async () => {
      // Found by a review: the cancel read nothing captured and was sent; the service ran the
      // capture first and released the rest. Medusa recorded the payment canceled while the
      // service held 30, and nothing ever brought it back.
      const { paymentId, orderId } = await t.authorizedPayment(100);
      // The capture runs 2.4 s after it was sent, after the provider gave up (2 s); the cancel, sent
      // after that, runs 1 s after it was sent: after the capture, and answered in time.
      slowWrite(`/manage/orders/${orderId}/capture`, 2_400);
      await expect(payment.capturePayment({ payment_id: paymentId, amount: 30 })).rejects.toThrow();
      slowWrite(`/manage/orders/${orderId}/cancel`, 1_000);
      const cancel = await outcomeOf(payment.cancelPayment(paymentId));
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "30.00", cancelledAmount: "70.00" });
      expect(cancel).toMatch(/reached the service before this cancel/);
      const stored = await payment.retrievePayment(paymentId, { select: ["id", "canceled_at"] });
      expect(stored.canceled_at).toBeNull();
      // The service's event brings the capture into Medusa.
      await followServiceOrder(t.container(), orderId);
      expect(await recorded(paymentId)).toEqual({ captured: "30.00", refunded: "0.00" });
    });

    it("a repeat of a capture that went through is refused by the amount Medusa recorded, not the one sent", async () => {
      // Found by a review: the lost capture sent only what was missing (20 of the admin's 30, after
      // 10 captured at the service), and the repeat guard compared the admin's 30 with that 20.
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await serviceClient().orders.capture(orderId, { amount: "10.00" }, { idempotencyKey: randomUUID() });
      await t.answerLost(() => payment.capturePayment({ payment_id: paymentId, amount: 30 }));
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "30.00" });
      await followServiceOrder(t.container(), orderId);
      expect(await recorded(paymentId)).toEqual({ captured: "30.00", refunded: "0.00" });
      const retry = await outcomeOf(payment.capturePayment({ payment_id: paymentId, amount: 30 }));
      expect(retry).toMatch(/went through, and the payment records it; nothing was sent/);
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "30.00" });
    });

    it("a follow of the service's figures is recorded while a write is kept: it sends nothing", async () => {
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await t.answerLost(() => payment.capturePayment({ payment_id: paymentId, amount: 30 }));
      // Captured at the service outside Medusa meanwhile: its order.captured event is followed.
      await serviceClient().orders.capture(orderId, { amount: "10.00" }, { idempotencyKey: randomUUID() });
      await followServiceOrder(t.container(), orderId);
      expect(await recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "40.00" });
      // Another capture still waits for the kept one to be settled or to pass its hour.
      const other = await outcomeOf(payment.capturePayment({ payment_id: paymentId, amount: 10 }));
      expect(other).toMatch(/is not a retry of it; nothing was sent/);
    });

    it("a capture whose answer was lost is settled by its retry, which sends nothing more", async () => {
      const { paymentId, orderId } = await t.authorizedPayment(100);
      await t.answerLost(() => payment.capturePayment({ payment_id: paymentId, amount: 30 }));
      expect(await keptWrite(paymentId)).toMatchObject({ operation: "orders.capture" });
      await payment.capturePayment({ payment_id: paymentId, amount: 30 });
      // Its retry finds the total reached: it landed, settled, nothing sent.
      expect(await keptWrite(paymentId)).toBeUndefined();
      expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "30.00" });
      expect(await recorded(paymentId)).toEqual({ captured: "30.00", refunded: "0.00" });
    });
  },
  { extra: { timeoutMs: 2_000 } },
);
