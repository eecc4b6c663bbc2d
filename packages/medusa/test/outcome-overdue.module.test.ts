import { signWebhook } from "@purchase-auth/core";
import { expect, it } from "vitest";
import { reconcileUnknownOutcomes } from "../src/workflows/reconcile";
import { moduleSandbox } from "./support/module-suite";
import { paymentModuleTests } from "./support/payment-module-tests";
import { jobContainer, orderLinkTable } from "./support/reconcile-job";
import { recordingLogger } from "./support/recording-logger";

// The reconcile job and a 202-accepted authorization whose webhooks are all lost, on the payment
// module with the provider, real PostgreSQL and the sandbox over HTTP. The sandbox has no webhook
// URL for the merchant: every event it emits is lost, as when deliveries give up. The job runs with
// an explicit `now`, so the boundary is exact and nothing waits.

const DB_NAME = "purchase-auth-medusa-overdue";
const WEBHOOK_SECRET = "whsec-overdue";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Attempts 1 h and then 2 h after creation: the last one 3 h after the send; grace 1 h. */
const SCHEDULED = "pp_purchase-auth_scheduled";
const SCHEDULE = { relative: ["00.01:00:00", "00.02:00:00"] };
/** One attempt as soon as possible, the default grace (a day). */
const ASYNC = "pp_purchase-auth_async";
const suite = moduleSandbox(DB_NAME, WEBHOOK_SECRET);

const { logger, lines: logLines } = recordingLogger();
const errorsNaming = (sessionId: string) =>
  logLines.filter((line) => line.level === "error" && line.message.includes(sessionId));

paymentModuleTests(
  suite,
  {
    dbName: DB_NAME,
    providers: [
      suite.providerConfig("scheduled", { attemptSchedule: SCHEDULE, outcomeGraceMs: HOUR }),
      suite.providerConfig("async", { attemptSchedule: "asap" }),
    ],
  },
  ({ payment, medusaApp }) => {
    // The job also reads Medusa's order tables (payments of canceled orders): here empty.
    const reconcileAt = async (at: number) => {
      await orderLinkTable(medusaApp);
      return reconcileUnknownOutcomes(jobContainer(payment, medusaApp, logger), new Date(at));
    };

    /**
     * A session the service accepted (202): its send time as the session recorded it, and its last
     * news (its last change: Medusa storing the 202, a moment after the send).
     */
    async function accepted(providerId: string, amount: number) {
      const { session, token } = await suite.openSession(payment, providerId, amount);
      expect(await payment.authorizePaymentSession(session.id, {})).toBeNull();
      const [stored] = await payment.listPaymentSessions(
        { id: session.id },
        { select: ["id", "status", "data", "payment_collection_id", "updated_at"] },
      );
      expect(stored).toMatchObject({
        status: "pending_authorization",
        data: { state: "pending_authorization" },
      });
      const sentAt = Date.parse(stored!.data!.authorize_sent_at as string);
      const newsAt = new Date(stored!.updated_at as Date | string).getTime();
      expect(newsAt).toBeGreaterThanOrEqual(sentAt);
      return { session: stored!, token, sentAt, newsAt };
    }

    async function sessionNow(id: string) {
      const [session] = await payment.listPaymentSessions({ id });
      const [collection] = await payment.listPaymentCollections({ id: session!.payment_collection_id });
      return { session: session!, collectionStatus: collection!.status };
    }

    it("flags an accepted session whose webhooks never arrive only after its last scheduled attempt + grace", async () => {
      const { session, token, sentAt } = await accepted(SCHEDULED, 40);
      expect(session.data).toMatchObject({ attempt_schedule: SCHEDULE, review_reason: null });
      // The service makes its attempts (virtual time); the success's webhook reaches nobody.
      suite.state.sandbox!.advanceClock(3 * HOUR);
      await suite.state.sandbox!.settle();
      const [authorization] = suite.state.sandbox!.authorizations({ customerToken: token });
      expect(authorization).toMatchObject({ status: "Succeeded", actionReference: session.id });
      const before = await sessionNow(session.id);

      // A grace after the send (and the session's last news), but before the last attempt + grace.
      expect((await reconcileAt(sentAt + 2 * HOUR)).flagged).toEqual([]);
      // One millisecond before the last scheduled attempt (send + 3 h) + the grace (1 h).
      expect((await reconcileAt(sentAt + 4 * HOUR - 1)).flagged).toEqual([]);
      expect((await sessionNow(session.id)).session.data).toMatchObject({ review_reason: null });
      expect(errorsNaming(session.id)).toEqual([]);

      expect((await reconcileAt(sentAt + 4 * HOUR)).flagged).toEqual([session.id]);
      const after = await sessionNow(session.id);
      expect(after.session.data).toMatchObject({
        ...before.session.data,
        state: "pending_authorization",
        review_reason: "OUTCOME_OVERDUE",
      });
      // Flagged only: Medusa's status, the collection and the money stay as they were.
      expect(after.session.status).toBe("pending_authorization");
      expect(after.collectionStatus).toBe(before.collectionStatus);
      expect(await payment.listPayments({ payment_session_id: session.id })).toEqual([]);
      const order = suite.state.sandbox!.orders().find((o) => o.orderId === authorization!.orderId);
      expect(order).toMatchObject({
        status: "NotActivated",
        capturedAmount: "0.00",
        cancelledAmount: "0.00",
      });
      const [logged] = errorsNaming(session.id);
      expect(logged?.message).toMatch(/needs review: OUTCOME_OVERDUE/);
      // Not every such session has an order (one resolved from an unknown outcome has only a cart).
      expect(logged?.message).toMatch(/Medusa records no payment for it/);
      expect(logged?.message).toMatch(/cancelled there before taking another payment/);
    });

    it("a flagged session still follows a late authorization.succeeded, as it would have", async () => {
      const { session, newsAt } = await accepted(ASYNC, 25);
      expect(session.data).toMatchObject({ attempt_schedule: null });
      await suite.state.sandbox!.settle(); // the one attempt succeeds; its webhook reaches nobody
      // One attempt at once: the default grace (a day) counts from the session's last news.
      expect((await reconcileAt(newsAt + DAY - 1)).flagged).toEqual([]);
      expect((await reconcileAt(newsAt + DAY)).flagged).toEqual([session.id]);

      const emitted = suite.state
        .sandbox!.events()
        .map((entry) => entry.event)
        .find(
          (event) =>
            event.type === "authorization.succeeded" &&
            (event.data as { actionReference?: string }).actionReference === session.id,
        );
      expect(emitted).toBeDefined();
      const late = signWebhook(emitted!, WEBHOOK_SECRET);
      const result = await payment.getWebhookActionAndData({
        provider: "purchase-auth_async",
        payload: { data: {}, rawData: Buffer.from(late.body), headers: late.headers },
      });
      expect(result).toEqual({ action: "authorized", data: { session_id: session.id, amount: "25.00" } });

      // What Medusa's processPaymentWorkflow does next: authorize the session, now with the order id.
      const authorized = await payment.authorizePaymentSession(session.id, {});
      const orderId = (emitted!.data as { orderId: string }).orderId;
      expect(authorized?.data).toMatchObject({ state: "authorized", order_id: orderId, review_reason: null });
      expect((await sessionNow(session.id)).session.status).toBe("authorized");
      await payment.capturePayment({ payment_id: authorized!.id });
      expect(suite.state.sandbox!.orders().find((o) => o.orderId === orderId)).toMatchObject({
        status: "Activated",
        capturedAmount: "25.00",
      });
      // Settled: later runs leave it alone.
      expect((await reconcileAt(newsAt + 2 * DAY)).flagged).toEqual([]);
    });

    it("running the job again flags and logs an overdue session once", async () => {
      const { session, newsAt } = await accepted(ASYNC, 12);
      expect((await reconcileAt(newsAt + DAY)).flagged).toEqual([session.id]);
      expect((await reconcileAt(newsAt + DAY + 5 * 60_000)).flagged).toEqual([]);
      expect(errorsNaming(session.id)).toHaveLength(1);
      expect((await sessionNow(session.id)).session.data).toMatchObject({ review_reason: "OUTCOME_OVERDUE" });
    });
  },
);
