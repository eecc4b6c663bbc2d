import { randomUUID } from "node:crypto";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import { PurchaseAuthClient } from "@purchase-auth/core";
import { followServiceOrder } from "@purchase-auth/medusa/workflows";
import { describe, expect, it } from "vitest";
import { expectMedusaMatchesService, placeOrder } from "./support/checkout";
import { RECORDED_BY_PLUGIN, recordedWrites } from "./support/recorded-writes";
import { shopSuite } from "./support/shop-suite";
import { eventually } from "./support/store-api";

// An order counts the money paid and refunded by its transactions, one per capture or refund row.
// When the reconcile job sends again a row a crash kept from the service (recorded-writes-crash),
// the order must count each capture and refund once, at its own amount, whatever follows of the
// service's events, releases of canceled orders and failed redos happen around it. The plugin's own
// rows (a canceled order's refund) have their transactions from the plugin, Medusa's from Medusa's
// workflows, which give every row without one the workflow's amount.

shopSuite("recorded-writes-transactions", (suite) => {
  const { api, container, sandbox, merchant, shop } = suite;
  const { serviceOrderOf, paymentOf, runJob, transactionsOf, pg, rowsOf, crashDuring, withWebhooksHeld } =
    recordedWrites(suite);

  const merchantClient = () =>
    new PurchaseAuthClient({
      baseUrl: sandbox().url,
      clientId: merchant().clientId,
      clientSecret: merchant().clientSecret,
      scope: merchant().scope,
    });
  const failWrites = (kind: "unavailable" | "rate_limited") =>
    sandbox().injectFault({ kind, match: { method: "POST", path: "/manage/orders/" }, count: null });

  /** An order captured in full (79.60) by the admin. */
  async function capturedOrder(email: string) {
    const { orderId } = await placeOrder(shop(), email);
    const placed = await paymentOf(orderId);
    const captured = await api.post(`/admin/payments/${placed.id}/capture`, {}, { headers: shop().admin });
    expect(captured.status).toBe(200);
    return { orderId, placed, serviceOrderId: String(placed.data.order_id) };
  }

  /** Canceled in Medusa without refunding anything: the plugin's release job refunds it. */
  const cancelInMedusaOnly = (orderId: string) =>
    pg().raw(`update "order" set status = 'canceled', canceled_at = now() where id = ?`, [orderId]);

  /** A first run whose redo fails (the service refusing order writes for now): the row stays set aside. */
  async function failedRedo(
    kind: "unavailable" | "rate_limited",
    paymentId: string,
    table: "capture" | "refund",
  ) {
    failWrites(kind);
    try {
      expect((await runJob()).resent).toEqual([]);
    } finally {
      sandbox().clearFaults();
    }
    expect(await rowsOf(table, paymentId, true)).toBe(1);
  }

  /** The lines Medusa's logger got at `level` while `work` ran (passed on as well). */
  async function logged(level: "warn" | "error", work: () => Promise<void>): Promise<string[]> {
    const logger = container().resolve(ContainerRegistrationKeys.LOGGER);
    const lines: string[] = [];
    const original = logger[level];
    logger[level] = (message: string, ...rest: unknown[]) => {
      lines.push(String(message));
      return original.call(logger, message, ...(rest as []));
    };
    try {
      await work();
    } finally {
      logger[level] = original;
    }
    return lines;
  }

  describe("a refund the plugin recorded itself, killed before it was sent", () => {
    it("is counted once after its redo, though a follow gave it a transaction first", async () => {
      const { orderId, placed, serviceOrderId } = await capturedOrder("plugin-refund@example.com");
      await crashDuring("refund", placed.id, 20, RECORDED_BY_PLUGIN);
      // A follow of the service (a webhook, the job) gives the plugin's rows their transactions.
      await followServiceOrder(container(), serviceOrderId);
      expect(await transactionsOf(orderId, "refund")).toEqual([-20]);

      expect((await runJob()).resent).toEqual([placed.id]);
      expect(serviceOrderOf(placed).refundedAmount).toBe("20.00");
      // The row set aside no longer counts; the redo's row does.
      expect(await transactionsOf(orderId, "refund")).toEqual([-20]);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("is not counted for a redo the service never took, though a follow gave its row a transaction", async () => {
      const { orderId, placed, serviceOrderId } = await capturedOrder("plugin-refund-redo@example.com");
      await crashDuring("refund", placed.id, 20, RECORDED_BY_PLUGIN);
      // The redo's send fails, and every read of the order is held: the job's, then the
      // provider's, with the redo's row recorded by Medusa.
      failWrites("unavailable");
      sandbox().injectFault({
        kind: "latency",
        match: { method: "GET", path: "/manage/orders/" },
        count: null,
        latencyMs: 5_000,
      });
      try {
        const job = runJob();
        // The row set aside and the redo's recorded, its provider call held: a follow meanwhile.
        await eventually(
          async () =>
            (await rowsOf("refund", placed.id, true)) === 1 && (await rowsOf("refund", placed.id)) === 1
              ? true
              : undefined,
          60_000,
        );
        // Reads answer at once from here (the provider's is held already); writes still fail.
        sandbox().clearFaults();
        failWrites("unavailable");
        await followServiceOrder(container(), serviceOrderId);
        expect((await job).resent).toEqual([]);
      } finally {
        sandbox().clearFaults();
      }
      // The redo failed; Medusa removed its row: the order counts no refund.
      expect(serviceOrderOf(placed).refundedAmount).toBe("0.00");
      expect(await rowsOf("refund", placed.id)).toBe(0);
      expect(await transactionsOf(orderId, "refund")).toEqual([]);

      expect((await runJob()).resent).toEqual([placed.id]);
      expect(serviceOrderOf(placed).refundedAmount).toBe("20.00");
      expect(await transactionsOf(orderId, "refund")).toEqual([-20]);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("leaves a refund the service made meanwhile its own amount", async () => {
      const { orderId, placed, serviceOrderId } = await capturedOrder("plugin-refund-beside@example.com");
      await crashDuring("refund", placed.id, 20, RECORDED_BY_PLUGIN);
      await withWebhooksHeld(async () => {
        await failedRedo("rate_limited", placed.id, "refund");
        // The merchant refunds 5 at the service directly; a follow (its webhook) records it.
        await merchantClient().orders.refund(
          serviceOrderId,
          { amount: "5.00" },
          { idempotencyKey: randomUUID() },
        );
        await followServiceOrder(container(), serviceOrderId);
        // Medusa's workflow gives every row without a transaction the redo's amount: not this one.
        expect((await runJob()).resent).toEqual([placed.id]);
      });
      expect(serviceOrderOf(placed).refundedAmount).toBe("25.00");
      expect(await transactionsOf(orderId, "refund")).toEqual([-20, -5]);
      await expectMedusaMatchesService(shop(), orderId);
    });
  });

  describe("a canceled order's refund, killed before it was sent", () => {
    it("is counted once when the release refunds the order while the row is set aside", async () => {
      const { orderId, placed } = await capturedOrder("canceled-release@example.com");
      await cancelInMedusaOnly(orderId);
      await crashDuring("refund", placed.id, 79.6, RECORDED_BY_PLUGIN);
      await withWebhooksHeld(async () => {
        await failedRedo("unavailable", placed.id, "refund");
        // The next run (its clock not past the grace of the release's new row): the release
        // refunds what Medusa shows unrefunded, and the row set aside is taken as done by it.
        await runJob(true);
      });
      expect(serviceOrderOf(placed).refundedAmount).toBe("79.60");
      expect(await rowsOf("refund", placed.id, true)).toBe(0);
      expect(await transactionsOf(orderId, "refund")).toEqual([-79.6]);
      await runJob();
      expect(await transactionsOf(orderId, "refund")).toEqual([-79.6]);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("is counted once when the job stopped between setting it aside and its transactions", async () => {
      const { orderId, placed, serviceOrderId } = await capturedOrder("canceled-set-aside-cut@example.com");
      await cancelInMedusaOnly(orderId);
      await crashDuring("refund", placed.id, 79.6, RECORDED_BY_PLUGIN);
      await withWebhooksHeld(async () => {
        await followServiceOrder(container(), serviceOrderId); // the row gets its transaction
        expect(await transactionsOf(orderId, "refund")).toEqual([-79.6]);
        // A job killed right after it set the row aside, before anything else.
        await pg().raw(`update refund set deleted_at = now() where payment_id = ? and deleted_at is null`, [
          placed.id,
        ]);
        await runJob(true);
      });
      // The service's refund webhook, followed.
      await followServiceOrder(container(), serviceOrderId);
      expect(serviceOrderOf(placed).refundedAmount).toBe("79.60");
      expect(await transactionsOf(orderId, "refund")).toEqual([-79.6]);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("counts as done when Medusa's workflow fails after the refund was sent and recorded", async () => {
      const { orderId, placed } = await capturedOrder("canceled-redo-credit-line@example.com");
      await cancelInMedusaOnly(orderId);
      await crashDuring("refund", placed.id, 79.6, RECORDED_BY_PLUGIN);
      // Medusa's refund workflow refuses a canceled order's credit line after the refund step.
      const errors = await logged("error", async () => {
        expect((await runJob()).resent).toEqual([placed.id]);
      });
      expect(serviceOrderOf(placed).refundedAmount).toBe("79.60");
      expect(errors.filter((line) => line.includes("does not take"))).toEqual([]);
      expect(await transactionsOf(orderId, "refund")).toEqual([-79.6]);
      await expectMedusaMatchesService(shop(), orderId);
    });
  });

  describe("Medusa's own capture, killed before it was sent", () => {
    it("leaves the capture the service made meanwhile, which a follow recorded, counted, and asks a person about the row", async () => {
      const { orderId } = await placeOrder(shop(), "admin-capture-beside@example.com");
      const placed = await paymentOf(orderId);
      const serviceOrderId = String(placed.data.order_id);
      await crashDuring("capture", placed.id, 30);
      await withWebhooksHeld(async () => {
        await failedRedo("rate_limited", placed.id, "capture");
        // The 30 reaches the service another way (a redo whose answer was lost, or the merchant);
        // the follow of its webhook records it.
        await merchantClient().orders.capture(
          serviceOrderId,
          { amount: "30.00" },
          { idempotencyKey: randomUUID() },
        );
        await followServiceOrder(container(), serviceOrderId);
        await runJob(true);
        await runJob();
      });
      expect(serviceOrderOf(placed).capturedAmount).toBe("30.00");
      expect(await transactionsOf(orderId, "capture")).toEqual([30]);
      await expectMedusaMatchesService(shop(), orderId);
      // The follow's 30 may be the row's own redo or another capture: the row is kept set aside,
      // and a person is asked (sending it could capture twice, dropping it could lose it).
      expect(await rowsOf("capture", placed.id, true)).toBe(1);
      const flagged = await paymentOf(orderId);
      expect(String(flagged.data.review_reason)).toMatch(/may have reached the service/);
    });
  });

  describe("Medusa's own writes, killed before they were sent", () => {
    it("two captures: each done again on its own and counted at its own amount", async () => {
      const { orderId } = await placeOrder(shop(), "two-captures@example.com");
      const placed = await paymentOf(orderId);
      await withWebhooksHeld(async () => {
        await crashDuring("capture", placed.id, 30);
        await crashDuring("capture", placed.id, 20);
        expect(await rowsOf("capture", placed.id)).toBe(2);
        // Both set aside, the older one done again: the service captures its 30 only.
        expect((await runJob()).resent).toEqual([placed.id]);
        expect(serviceOrderOf(placed).capturedAmount).toBe("30.00");
        expect(await rowsOf("capture", placed.id, true)).toBe(1);
        expect((await runJob()).resent).toEqual([placed.id]);
      });
      expect(serviceOrderOf(placed).capturedAmount).toBe("50.00");
      expect(await transactionsOf(orderId, "capture")).toEqual([20, 30]);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("two captures of one amount: an admin's capture of it meanwhile is not taken for the second's redo", async () => {
      const { orderId } = await placeOrder(shop(), "two-equal-captures@example.com");
      const placed = await paymentOf(orderId);
      await withWebhooksHeld(async () => {
        await crashDuring("capture", placed.id, 20);
        await crashDuring("capture", placed.id, 20);
        expect((await runJob()).resent).toEqual([placed.id]);
        expect(serviceOrderOf(placed).capturedAmount).toBe("20.00");
        // The admin captures 20 more while the second one waits, set aside.
        const captured = await api.post(
          `/admin/payments/${placed.id}/capture`,
          { amount: 20 },
          { headers: shop().admin },
        );
        expect(captured.status).toBe(200);
        expect(serviceOrderOf(placed).capturedAmount).toBe("40.00");
        expect((await runJob()).resent).toEqual([placed.id]);
      });
      expect(serviceOrderOf(placed).capturedAmount).toBe("60.00");
      expect(await rowsOf("capture", placed.id, true)).toBe(0);
      expect(await transactionsOf(orderId, "capture")).toEqual([20, 20, 20]);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("a refund whose redo Medusa's workflow failed after it was sent (an order change pending) is counted", async () => {
      const { orderId, placed } = await capturedOrder("refund-pending-change@example.com");
      await crashDuring("refund", placed.id, 20);
      // A return, claim, exchange or order edit the merchant has begun and not confirmed: Medusa's
      // refund workflow refuses its credit line after the refund step.
      await container()
        .resolve(Modules.ORDER)
        .createOrderChange({ order_id: orderId, change_type: "edit" } as never);
      const warnings = await logged("warn", async () => {
        expect((await runJob()).resent).toEqual([placed.id]);
      });
      expect(
        warnings.filter(
          (line) => line.includes("Medusa recorded it") && line.includes("workflow then failed"),
        ),
      ).toEqual([expect.stringContaining("existing active order change")]);
      expect(serviceOrderOf(placed).refundedAmount).toBe("20.00");
      expect(await rowsOf("refund", placed.id)).toBe(1);
      expect(await transactionsOf(orderId, "refund")).toEqual([-20]);
    });

    it("a redo stopped after its refund was sent, before its transaction, is counted by the next run", async () => {
      const { orderId, placed } = await capturedOrder("redo-stopped-mid-workflow@example.com");
      await crashDuring("refund", placed.id, 20);
      // What a job stopped inside its redo leaves: the row set aside, its try begun, and the
      // redo's row recorded and sent by the payment module (Medusa's refund step), its workflow
      // stopped before the order transaction.
      await pg().raw(
        `update refund set deleted_at = now(), metadata = jsonb_build_object('purchase_auth_redo',
           jsonb_build_object('tries', 1, 'redo_started_at', to_jsonb(now()) #>> '{}'))
         where payment_id = ? and deleted_at is null`,
        [placed.id],
      );
      await container().resolve(Modules.PAYMENT).refundPayment({ payment_id: placed.id, amount: 20 });
      expect(serviceOrderOf(placed).refundedAmount).toBe("20.00");
      await runJob();
      expect(await rowsOf("refund", placed.id, true)).toBe(0);
      expect(await rowsOf("refund", placed.id)).toBe(1);
      expect(serviceOrderOf(placed).refundedAmount).toBe("20.00");
      expect(await transactionsOf(orderId, "refund")).toEqual([-20]);
      await expectMedusaMatchesService(shop(), orderId);
    });
  });
});
