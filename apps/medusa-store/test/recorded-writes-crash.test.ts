import { randomUUID } from "node:crypto";
import { PurchaseAuthClient } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { expectMedusaMatchesService, placeOrder } from "./support/checkout";
import { recordedWrites } from "./support/recorded-writes";
import { shopSuite } from "./support/shop-suite";

// Medusa commits a capture's (or a refund's) row, then calls the provider. A store killed between
// the two (SIGKILL of a real process, here a payment module on the store's database) leaves Medusa
// showing money the service never captured or refunded. The reconcile job sends it again once the
// row is old enough not to be a call still on its way, and Medusa's records end equal to the
// service's; a capture the service no longer takes is removed instead.

shopSuite("recorded-writes-crash", (suite) => {
  const { api, sandbox, merchant, shop } = suite;
  const { serviceOrderOf, paymentOf, runJob, transactionsOf, pg, rowsOf, crashDuring, withWebhooksHeld } =
    recordedWrites(suite);

  describe("a capture recorded by a store killed before it was sent", () => {
    it("is sent by the job once the grace has passed, once, with its order transaction", async () => {
      const { orderId } = await placeOrder(shop(), "capture-crash@example.com");
      const placed = await paymentOf(orderId);
      await crashDuring("capture", placed.id, 30);

      const crashed = await paymentOf(orderId);
      expect(crashed.captures?.map((c) => Number(c.amount))).toEqual([30]);
      expect(serviceOrderOf(crashed).capturedAmount).toBe("0.00"); // Medusa above the service

      // A call could still be on its way: not yet.
      expect((await runJob(true)).resent).toEqual([]);
      expect(serviceOrderOf(crashed).capturedAmount).toBe("0.00");

      // Two runs at once (two instances, or a run outlasting its interval): one redo.
      const reports = await Promise.all([runJob(), runJob()]);
      expect(reports.flatMap((report) => report.resent)).toEqual([placed.id]);
      const after = await paymentOf(orderId);
      expect(after.captures?.map((c) => Number(c.amount))).toEqual([30]);
      expect(serviceOrderOf(after).capturedAmount).toBe("30.00");
      expect(await transactionsOf(orderId, "capture")).toEqual([30]);
      await expectMedusaMatchesService(shop(), orderId);

      // Done: the next run sends nothing, records nothing.
      expect((await runJob()).resent).toEqual([]);
      expect(serviceOrderOf(after).capturedAmount).toBe("30.00");
      expect((await paymentOf(orderId)).captures).toHaveLength(1);
      expect(
        sandbox()
          .orders()
          .filter((o) => o.orderId === after.data.order_id),
      ).toHaveLength(1);
    });

    it("is not sent twice when the job was killed after its redo, before it removed the row", async () => {
      const { orderId } = await placeOrder(shop(), "capture-redo-crash@example.com");
      const placed = await paymentOf(orderId);
      await crashDuring("capture", placed.id, 30);
      expect((await runJob()).resent).toEqual([placed.id]);
      expect(serviceOrderOf(placed).capturedAmount).toBe("30.00");
      // As the job leaves it when killed between the redo and removing the row it set aside: the
      // row again, set aside and its try begun just before the redo's row was recorded.
      await pg().raw(
        `insert into capture
         select (jsonb_populate_record(null::capture, to_jsonb(c) || jsonb_build_object(
           'id', c.id || '_set_aside',
           'created_at', c.created_at - interval '20 minutes',
           'deleted_at', c.created_at - interval '1 second',
           'metadata', jsonb_build_object('purchase_auth_redo', jsonb_build_object('tries', 1,
             'redo_started_at', to_jsonb(c.created_at - interval '1 second') #>> '{}'))))).*
         from capture c where c.payment_id = ? and c.deleted_at is null`,
        [placed.id],
      );
      expect((await runJob()).resent).toEqual([]);
      expect(serviceOrderOf(placed).capturedAmount).toBe("30.00");
      expect((await paymentOf(orderId)).captures?.map((c) => Number(c.amount))).toEqual([30]);
      expect(await rowsOf("capture", placed.id)).toBe(1);
      const { rows } = await pg().raw("select count(*) from capture where payment_id = ?", [placed.id]);
      expect(Number(rows[0]!.count)).toBe(1); // the row set aside is gone
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("is recorded with its transaction when its redo reached the service but the answer was lost", async () => {
      const { orderId } = await placeOrder(shop(), "capture-redo-lost@example.com");
      const placed = await paymentOf(orderId);
      await crashDuring("capture", placed.id, 30);
      // Webhooks held: no follow records the service's capture meanwhile (without a transaction).
      await withWebhooksHeld(async () => {
        // Every answer to an order write is lost: the redo's capture lands, Medusa removes its row.
        sandbox().injectFault({
          kind: "drop_after_commit",
          match: { method: "POST", path: "/manage/orders/" },
          count: null,
        });
        try {
          // Done again at once: the provider reads the order first, finds it captured, sends
          // nothing, and Medusa records the capture with its transaction.
          expect((await runJob()).resent).toEqual([placed.id]);
        } finally {
          sandbox().clearFaults();
        }
        const after = await paymentOf(orderId);
        expect(after.captures?.map((c) => Number(c.amount))).toEqual([30]);
        expect(serviceOrderOf(after).capturedAmount).toBe("30.00"); // never twice
        expect(await transactionsOf(orderId, "capture")).toEqual([30]);
        expect((await runJob()).resent).toEqual([]);
      });
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("is removed when the service no longer takes it, and Medusa shows what the service holds", async () => {
      const { orderId } = await placeOrder(shop(), "capture-refused@example.com");
      const placed = await paymentOf(orderId);
      await crashDuring("capture", placed.id, 30);
      // Meanwhile the authorization was cancelled at the service (by the merchant, elsewhere).
      const client = new PurchaseAuthClient({
        baseUrl: sandbox().url,
        clientId: merchant().clientId,
        clientSecret: merchant().clientSecret,
        scope: merchant().scope,
      });
      await client.orders.cancel(String(placed.data.order_id), {}, { idempotencyKey: randomUUID() });

      expect((await runJob()).resent).toEqual([placed.id]);
      const after = await paymentOf(orderId);
      expect(after.captures ?? []).toEqual([]);
      expect(serviceOrderOf(after)).toMatchObject({ status: "Cancelled", capturedAmount: "0.00" });
      expect(after.canceled_at).not.toBeNull();
      expect(await transactionsOf(orderId, "capture")).toEqual([]);
      await expectMedusaMatchesService(shop(), orderId);
    });
  });

  describe("a refund recorded by a store killed before it was sent", () => {
    it("is sent by the job once, with its order transaction", async () => {
      const { orderId } = await placeOrder(shop(), "refund-crash@example.com");
      const placed = await paymentOf(orderId);
      const captured = await api.post(`/admin/payments/${placed.id}/capture`, {}, { headers: shop().admin });
      expect(captured.status).toBe(200);
      await crashDuring("refund", placed.id, 20);

      const crashed = await paymentOf(orderId);
      expect(crashed.refunds?.map((r) => Number(r.amount))).toEqual([20]);
      expect(serviceOrderOf(crashed).refundedAmount).toBe("0.00");

      expect((await runJob()).resent).toEqual([placed.id]);
      const after = await paymentOf(orderId);
      expect(after.refunds?.map((r) => Number(r.amount))).toEqual([20]);
      expect(serviceOrderOf(after)).toMatchObject({ capturedAmount: "79.60", refundedAmount: "20.00" });
      expect(await transactionsOf(orderId, "refund")).toEqual([-20]);
      await expectMedusaMatchesService(shop(), orderId);

      expect((await runJob()).resent).toEqual([]);
      expect(serviceOrderOf(after).refundedAmount).toBe("20.00");
    });

    it("is kept for the next run when its redo meets a passing fault, never lost", async () => {
      const { orderId } = await placeOrder(shop(), "refund-fault@example.com");
      const placed = await paymentOf(orderId);
      const captured = await api.post(`/admin/payments/${placed.id}/capture`, {}, { headers: shop().admin });
      expect(captured.status).toBe(200);
      await crashDuring("refund", placed.id, 20);

      // The service is unreachable for refunds during the run: the redo fails, and is kept.
      sandbox().injectFault({
        kind: "unavailable",
        match: { method: "POST", path: "/manage/orders/" },
        count: null,
      });
      try {
        expect((await runJob()).resent).toEqual([]);
      } finally {
        sandbox().clearFaults();
      }
      expect(serviceOrderOf(placed).refundedAmount).toBe("0.00");

      expect((await runJob()).resent).toEqual([placed.id]);
      const after = await paymentOf(orderId);
      expect(after.refunds?.map((r) => Number(r.amount))).toEqual([20]);
      expect(serviceOrderOf(after).refundedAmount).toBe("20.00");
      expect(await transactionsOf(orderId, "refund")).toEqual([-20]);
      await expectMedusaMatchesService(shop(), orderId);
      expect((await runJob()).resent).toEqual([]);
    });
  });
});
