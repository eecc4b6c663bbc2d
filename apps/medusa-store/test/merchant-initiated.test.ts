import {
  chargeStoredTokenWorkflow,
  reconcileUnknownOutcomes,
  type StoredTokenCharge,
} from "@purchase-auth/medusa/workflows";
import { describe, expect, it } from "vitest";
import {
  customerWithToken,
  expectMedusaMatchesService,
  loseCreateAnswers,
  orderOnceFollowed,
  orderWithPayments,
} from "./support/checkout";
import {
  chargeDraft as chargeDraftWith,
  draftOrder as makeDraftOrder,
  serverOrder as makeServerOrder,
} from "./support/orders";
import { shopSuite } from "./support/shop-suite";
import { eventually, registerCustomer } from "./support/store-api";

// Issue 14 (Medusa): charging a customer's stored token without checkout, on the whole application
// (medusa-config.ts), real PostgreSQL and the sandbox over HTTP. An order made server-side (as a
// subscription's scheduled job makes it, with createOrderWorkflow) is charged by the plugin's
// workflow; a draft order by the admin route. Every charge is compared with the service's records.

const cents = (value: unknown) => Math.round(Number(value) * 100);

shopSuite("merchant-initiated", (suite) => {
  const { api, container, sandbox, shop, store, authorizationsOf } = suite;

  const serverOrder = (customerId: string, email: string) =>
    makeServerOrder(container(), store(), customerId, email);

  async function charge(orderId: string, extra: { new_attempt?: boolean } = {}): Promise<StoredTokenCharge> {
    const { result } = await chargeStoredTokenWorkflow(container()).run({
      input: { order_id: orderId, ...extra },
    });
    return result;
  }

  /** A charge whose every answer is lost after the service committed it: its outcome is unknown. */
  async function chargeWithAnswersLost(orderId: string): Promise<StoredTokenCharge> {
    loseCreateAnswers(sandbox());
    try {
      return await charge(orderId);
    } finally {
      sandbox().clearFaults();
    }
  }

  async function orderTotal(orderId: string): Promise<number> {
    const { data } = await api.get<{ order: { total: number } }>(`/admin/orders/${orderId}?fields=id,total`, {
      headers: shop().admin,
    });
    return cents(data.order.total);
  }

  describe("the charge workflow on a server-created order", () => {
    it("charges the stored token once, however often it runs, and Medusa's payment matches the service's", async () => {
      const customer = await customerWithToken(shop(), "renewal@example.com");
      const orderId = await serverOrder(customer.customerId, "renewal@example.com");

      // Two runs at once (a job fired twice), then a third: one charge.
      const [first, second] = await Promise.all([charge(orderId), charge(orderId)]);
      const third = await charge(orderId);
      for (const result of [first, second, third]) {
        expect(result).toMatchObject({ order_id: orderId, status: "authorized", reason: null });
      }
      expect([first, second, third].filter((r) => r.attempted)).toHaveLength(1);
      expect(new Set([first, second, third].map((r) => r.payment_id)).size).toBe(1);

      const authorizations = authorizationsOf(customer.customerToken);
      expect(authorizations).toHaveLength(1);
      expect(authorizations[0]).toMatchObject({
        status: "Succeeded",
        actionReference: first.payment_session_id,
        orderId: first.service_order_id,
      });
      const { order, compared } = await expectMedusaMatchesService(shop(), orderId);
      expect(order.payment_collections).toHaveLength(1);
      expect(order.payment_collections[0]!.payments).toHaveLength(1);
      expect(compared).toHaveLength(1);
      expect(cents(compared[0]!.totalAmount)).toBe(await orderTotal(orderId));
      expect(cents(first.amount!)).toBe(await orderTotal(orderId));

      // Captured from the order like any payment: the service captures the same amount.
      const payment = order.payment_collections[0]!.payments[0]!;
      const captured = await api.post(`/admin/payments/${payment.id}/capture`, {}, { headers: shop().admin });
      expect(captured.status).toBe(200);
      const after = await expectMedusaMatchesService(shop(), orderId);
      expect(after.compared[0]).toMatchObject({ status: "Activated" });
      expect(cents(after.compared[0]!.capturedAmount)).toBe(await orderTotal(orderId));
    });

    it("a token revoked at the service ends with the reason: nothing sent, nothing to capture", async () => {
      const customer = await customerWithToken(shop(), "revoked-renewal@example.com");
      const orderId = await serverOrder(customer.customerId, "revoked-renewal@example.com");
      sandbox().setCustomerTokenStatus(customer.customerToken, "Revoked");

      const result = await charge(orderId);
      expect(result).toMatchObject({
        status: "declined",
        reason: "TOKEN_REVOKED",
        retry: "no",
        attempted: false,
        payment_id: null,
        customer_token: customer.customerToken,
      });
      expect(result.message).toMatch(/TOKEN_REVOKED: The customer token was revoked/);
      // Again (the job's next run): the same answer, still nothing sent.
      expect(await charge(orderId)).toMatchObject({ status: "declined", reason: "TOKEN_REVOKED" });
      expect(authorizationsOf(customer.customerToken)).toHaveLength(0);
      const order = await orderWithPayments(shop(), orderId);
      expect(order.payment_collections.flatMap((c) => c.payments)).toEqual([]);
    });

    it("a decline not worth retrying stops; the same order is tried anew only when asked", async () => {
      const customer = await customerWithToken(shop(), "no-funds@example.com", { funds: "1.00" });
      const orderId = await serverOrder(customer.customerId, "no-funds@example.com");

      const declined = await charge(orderId);
      expect(declined).toMatchObject({
        status: "declined",
        reason: "PAYMENT_METHOD_NO_FUNDS",
        retry: "no",
        attempted: true,
        payment_id: null,
      });
      expect(authorizationsOf(customer.customerToken).map((a) => a.status)).toEqual(["Failed"]);

      // The job runs again: it reports the reason and sends nothing.
      expect(await charge(orderId)).toMatchObject({
        status: "declined",
        reason: "PAYMENT_METHOD_NO_FUNDS",
        attempted: false,
      });
      expect(authorizationsOf(customer.customerToken)).toHaveLength(1);

      // The customer added funds; the merchant asks for a new attempt: a new session, a new key.
      sandbox().updateCustomerToken(customer.customerToken, { funds: null });
      const paid = await charge(orderId, { new_attempt: true });
      expect(paid).toMatchObject({ status: "authorized", attempted: true });
      expect(paid.payment_session_id).not.toBe(declined.payment_session_id);
      const attempts = authorizationsOf(customer.customerToken);
      expect(attempts.map((a) => a.status).sort()).toEqual(["Failed", "Succeeded"]);
      expect(new Set(attempts.map((a) => a.idempotencyKey)).size).toBe(2);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("PAYMENT_FAILED is retried as new attempts with new keys, never a reused key", async () => {
      const customer = await customerWithToken(shop(), "flaky@example.com");
      const orderId = await serverOrder(customer.customerId, "flaky@example.com");
      sandbox().updateCustomerToken(customer.customerToken, { failureReason: "PAYMENT_FAILED" });

      const failed = await charge(orderId);
      expect(failed).toMatchObject({ status: "declined", reason: "PAYMENT_FAILED", retry: "new-attempt" });
      const tried = authorizationsOf(customer.customerToken).length;
      expect(tried).toBeGreaterThan(0);

      sandbox().updateCustomerToken(customer.customerToken, { failureReason: null });
      const paid = await charge(orderId);
      expect(paid).toMatchObject({ status: "authorized", attempted: true });
      expect(paid.payment_session_id).toBe(failed.payment_session_id);
      const attempts = authorizationsOf(customer.customerToken);
      expect(attempts).toHaveLength(tried + 1);
      expect(attempts.filter((a) => a.status === "Succeeded")).toHaveLength(1);
      expect(new Set(attempts.map((a) => a.idempotencyKey)).size).toBe(attempts.length);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("a lost answer is unknown; the next run repeats it with the same key and records the one charge", async () => {
      const customer = await customerWithToken(shop(), "lost-answer@example.com");
      const orderId = await serverOrder(customer.customerId, "lost-answer@example.com");
      const lost = await chargeWithAnswersLost(orderId);
      expect(lost).toMatchObject({ status: "unknown", retry: "same-key", payment_id: null });
      const [held] = authorizationsOf(customer.customerToken);
      expect(held?.status).toBe("Succeeded"); // the service charged; Medusa does not know yet

      const found = await charge(orderId);
      expect(found).toMatchObject({
        status: "authorized",
        attempted: true,
        payment_session_id: lost.payment_session_id,
        service_order_id: held!.orderId,
      });
      expect(authorizationsOf(customer.customerToken)).toHaveLength(1);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("an unknown outcome the reconcile job settles first is kept for the order (same key), never released", async () => {
      const customer = await customerWithToken(shop(), "reconciled@example.com");
      const orderId = await serverOrder(customer.customerId, "reconciled@example.com");
      const lost = await chargeWithAnswersLost(orderId);
      expect(lost).toMatchObject({ status: "unknown" });
      const report = await reconcileUnknownOutcomes(container());
      expect(report.resolved).toEqual([lost.payment_session_id]);
      // The order was waiting for this very charge: the job records it, it does not release it.
      const [kept] = authorizationsOf(customer.customerToken);
      expect(
        sandbox()
          .orders()
          .find((o) => o.orderId === kept!.orderId),
      ).toMatchObject({
        status: "NotActivated",
      });

      expect(await charge(orderId)).toMatchObject({
        status: "authorized",
        attempted: false,
        payment_session_id: lost.payment_session_id,
      });
      expect(authorizationsOf(customer.customerToken)).toHaveLength(1);
      const { compared } = await expectMedusaMatchesService(shop(), orderId);
      expect(compared.map((o) => o.status)).toEqual(["NotActivated"]);
      expect(cents(compared[0]!.totalAmount)).toBe(await orderTotal(orderId));
    });

    it("an authorization the service decides later (202) is finished by its webhook", async () => {
      const customer = await customerWithToken(shop(), "challenge@example.com", { needsChallenge: true });
      const orderId = await serverOrder(customer.customerId, "challenge@example.com");
      const pending = await charge(orderId);
      expect(pending).toMatchObject({ status: "pending", payment_id: null });
      expect(await charge(orderId)).toMatchObject({ status: "pending", attempted: false });

      await sandbox().settle();
      const order = await eventually(async () => {
        const found = await orderWithPayments(shop(), orderId);
        return found.payment_collections[0]?.payments.length ? found : undefined;
      });
      expect(order.payment_collections[0]!.payments[0]!.data).toMatchObject({
        session_id: pending.payment_session_id,
      });
      expect(await charge(orderId)).toMatchObject({ status: "authorized", attempted: false });
      expect(authorizationsOf(customer.customerToken)).toHaveLength(1);
      const { compared } = await expectMedusaMatchesService(shop(), orderId);
      expect(cents(compared[0]!.totalAmount)).toBe(await orderTotal(orderId));
    });

    it("after an asynchronous PAYMENT_FAILED the next run is a new attempt in a new session", async () => {
      const customer = await customerWithToken(shop(), "async-failed@example.com", { needsChallenge: true });
      sandbox().updateCustomerToken(customer.customerToken, { failureReason: "PAYMENT_FAILED" });
      const orderId = await serverOrder(customer.customerId, "async-failed@example.com");
      const pending = await charge(orderId);
      expect(pending).toMatchObject({ status: "pending" });

      await sandbox().settle();
      // The plugin writes the order's reason, then the collection's status: wait for the last.
      const failed = await orderOnceFollowed(shop(), orderId, {
        sessionState: "failed",
        collectionStatus: "failed",
      });
      expect(failed.metadata).toMatchObject({ purchase_auth_payment_failed: { reason: "PAYMENT_FAILED" } });
      expect(failed.payment_collections[0]!.payment_sessions[0]!.data).toMatchObject({
        state: "failed",
        failure_reason: "PAYMENT_FAILED",
      });
      expect(authorizationsOf(customer.customerToken).map((a) => a.status)).toEqual(["Failed"]);

      sandbox().updateCustomerToken(customer.customerToken, { failureReason: null, needsChallenge: false });
      const paid = await charge(orderId);
      expect(paid).toMatchObject({ status: "authorized", attempted: true });
      expect(paid.payment_session_id).not.toBe(pending.payment_session_id);
      const attempts = authorizationsOf(customer.customerToken);
      expect(attempts.map((a) => a.status).sort()).toEqual(["Failed", "Succeeded"]);
      expect(new Set(attempts.map((a) => a.idempotencyKey)).size).toBe(2);
      await expectMedusaMatchesService(shop(), orderId);
    });
  });

  describe("the admin action on a draft order", () => {
    const draftOrder = (customerId: string, email: string) =>
      makeDraftOrder(api, shop().admin, store(), customerId, email);

    const chargeDraft = (id: string) => chargeDraftWith(shop(), id);

    it("charges the customer's saved token, places the order, and a second click charges nothing", async () => {
      const customer = await customerWithToken(shop(), "draft@example.com");
      const id = await draftOrder(customer.customerId, "draft@example.com");
      const total = await orderTotal(id);

      const answer = await chargeDraft(id);
      expect(answer.status).toBe(200);
      expect(answer.data.charge).toMatchObject({ status: "authorized", attempted: true });
      expect(answer.data.order).toMatchObject({ id, is_draft_order: false, status: "pending" });
      expect(cents(answer.data.charge.amount!)).toBe(total);

      const again = await chargeDraft(id);
      expect(again.status).toBe(200);
      expect(again.data.charge).toMatchObject({
        status: "authorized",
        attempted: false,
        payment_id: answer.data.charge.payment_id,
      });
      expect(authorizationsOf(customer.customerToken)).toHaveLength(1);
      const { compared } = await expectMedusaMatchesService(shop(), id);
      expect(compared.map((o) => cents(o.totalAmount))).toEqual([total]);
    });

    it("answers 400 for a customer without a stored token and 422 with the reason for a revoked one; the draft stays a draft", async () => {
      const bare = await registerCustomer(api, shop().publishableKey, "no-token@example.com");
      const withoutToken = await draftOrder(bare.customerId, "no-token@example.com");
      const refused = await chargeDraft(withoutToken);
      expect(refused.status).toBe(400);
      expect(refused.data.message).toMatch(/no stored customer token/);
      const stillDraft = await api.get<{ draft_order: { status: string } }>(
        `/admin/draft-orders/${withoutToken}`,
        {
          headers: shop().admin,
        },
      );
      expect(stillDraft.data.draft_order.status).toBe("draft");

      const customer = await customerWithToken(shop(), "draft-revoked@example.com");
      const id = await draftOrder(customer.customerId, "draft-revoked@example.com");
      // Admin only: a charge without the customer present needs a merchant's user.
      const anonymous = await api.post(
        `/admin/draft-orders/${id}/purchase-auth-charge`,
        {},
        {
          validateStatus: () => true,
        },
      );
      expect(anonymous.status).toBe(401);

      sandbox().setCustomerTokenStatus(customer.customerToken, "Revoked");
      const declined = await chargeDraft(id);
      expect(declined.status).toBe(422);
      expect(declined.data.charge).toMatchObject({ status: "declined", reason: "TOKEN_REVOKED" });
      expect(declined.data.message).toMatch(/TOKEN_REVOKED/);
      expect(declined.data.order).toMatchObject({ is_draft_order: true, status: "draft" });
      expect(authorizationsOf(customer.customerToken)).toHaveLength(0);
    });
  });
});
