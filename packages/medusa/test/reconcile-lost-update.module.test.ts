import { signWebhook } from "@purchase-auth/core";
import { expect, it } from "vitest";
import type { PurchaseAuthProviderService } from "../src/providers/purchase-auth/service";
import { reconcileUnknownOutcomes } from "../src/workflows/reconcile";
import { asyncProviderTests } from "./support/async-provider-tests";
import { succeededEventOf } from "./support/lost-answer";
import { providerOf } from "./support/module-suite";
import { jobContainer, orderLinkTable } from "./support/reconcile-job";

// The reconcile job reads an unknown session, resends its key (a network call), then writes what it
// learned. A webhook arriving during that call must not be lost nor undone by the write: it waits
// for the job's claim on the session to end, then merges into what the job wrote. The interleaving
// is made exact: the webhook is delivered from inside the job's call to the provider, after the
// service answered and before the job writes.

asyncProviderTests(
  "reconcile-lost-update",
  ({ payment, medusaApp, suite, logger, providerId: ASYNC, webhookSecret: WEBHOOK_SECRET }) => {
    it("a webhook processed while the job resends the key is kept: the job does not write over it", async () => {
      await orderLinkTable(medusaApp);
      const sandbox = suite.state.sandbox!;
      const { session } = await suite.openSession(payment, ASYNC, 35);
      // The service accepts (202) and commits; its answer is lost.
      sandbox.injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: "/purchase/authorizations" },
        count: null,
      });
      try {
        await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(/not authorized/);
      } finally {
        sandbox.clearFaults();
      }
      const [unknown] = await payment.listPaymentSessions({ id: session.id });
      expect(unknown?.data).toMatchObject({ state: "unknown", authorize_attempt: 1 });

      // The service makes its attempt: authorized. Its webhook has not reached Medusa yet.
      const succeeded = await succeededEventOf(sandbox, session.id);
      const orderId = (succeeded!.data as { orderId: string }).orderId;

      // The job resends the key (the service replays its 202); the webhook arrives just then. It
      // waits for the job's claim to end, then merges into what the job wrote.
      const provider = providerOf(payment, ASYNC) as unknown as PurchaseAuthProviderService;
      const resolveUnknown = provider.resolveUnknown;
      const kinds: string[] = [];
      let webhook: Promise<unknown> | undefined;
      provider.resolveUnknown = async (
        ...args: Parameters<PurchaseAuthProviderService["resolveUnknown"]>
      ) => {
        const resolution = await resolveUnknown.apply(provider, args);
        kinds.push(resolution.kind);
        const signed = signWebhook(succeeded!, WEBHOOK_SECRET);
        webhook = payment.getWebhookActionAndData({
          provider: "purchase-auth_async",
          payload: { data: {}, rawData: Buffer.from(signed.body), headers: signed.headers },
        });
        return resolution;
      };
      let report: Awaited<ReturnType<typeof reconcileUnknownOutcomes>>;
      try {
        report = await reconcileUnknownOutcomes(jobContainer(payment, medusaApp, logger));
      } finally {
        provider.resolveUnknown = resolveUnknown;
      }
      expect(kinds).toEqual(["pending"]);
      expect(report.resolved).toEqual([session.id]);
      expect(await webhook).toEqual({
        action: "authorized",
        data: { session_id: session.id, amount: "35.00" },
      });
      // What the webhook wrote stays: the order id and the authorized state.
      const [after] = await payment.listPaymentSessions({ id: session.id });
      expect(after?.data).toMatchObject({ state: "authorized", order_id: orderId });

      // What Medusa's payment workflow does after the webhook: the session authorizes on that order.
      const authorized = await payment.authorizePaymentSession(session.id, {});
      expect(authorized?.data).toMatchObject({ state: "authorized", order_id: orderId });
      // Nothing is left for the job.
      expect(await reconcileUnknownOutcomes(jobContainer(payment, medusaApp, logger))).toEqual({
        resolved: [],
        stillUnknown: [],
        flagged: [],
        resent: [],
        converted: [],
      });
    });
  },
);
