import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { expect } from "vitest";
import type { PurchaseAuthProviderService } from "../../src/providers/purchase-auth/service";
import type { Knex } from "../../src/providers/purchase-auth/session-sql";
import { reconcileUnknownOutcomes } from "../../src/workflows/reconcile";
import { deliverWebhook } from "./lost-answer";
import { moduleSandbox, providerOf } from "./module-suite";
import { type PaymentModuleContext, paymentModuleTests } from "./payment-module-tests";
import { jobContainer } from "./reconcile-job";
import { type LogLine, recordingLogger } from "./recording-logger";

/** What a file of synchronous-provider tests is handed: the module, its sandbox, and the job. */
export interface SyncProviderContext extends PaymentModuleContext {
  suite: ReturnType<typeof moduleSandbox>;
  logger: ReturnType<typeof recordingLogger>["logger"];
  /** Every line the plugin logged in this file's tests, in order. */
  logLines: LogLine[];
  /** The payment provider id Medusa gives the one provider ("pp_purchase-auth_sync"). */
  providerId: string;
  /** "pp_purchase-auth_sync-auto", registered with `withAuto` only. */
  autoProviderId: string;
  /** The secret the sandbox signs webhooks with, for delivering them as the service would. */
  webhookSecret: string;
  sandbox: () => NonNullable<ReturnType<typeof moduleSandbox>["state"]["sandbox"]>;
  /** The service's order `orderId`, as the sandbox holds it. */
  serviceOrder: (
    orderId: string,
  ) => ReturnType<ReturnType<SyncProviderContext["sandbox"]>["orders"]>[number] | undefined;
  /** What Medusa records as captured and refunded for payment `paymentId` ("30.00"). */
  recorded: (paymentId: string) => Promise<{ captured: string; refunded: string }>;
  /** The session's data as Medusa stores it. */
  sessionData: (id: string) => Promise<Record<string, unknown> | undefined>;
  /** The registered provider, for replacing its methods with hooks. */
  provider: () => PurchaseAuthProviderService;
  /** What the reconcile job resolves from Medusa's container. */
  container: () => MedusaContainer;
  /** One run of the reconcile job, as if at `now`. */
  runJob: (now?: Date) => ReturnType<typeof reconcileUnknownOutcomes>;
  /** The PostgreSQL connection the job uses. */
  pg: () => Knex;
  /**
   * A webhook as Medusa's processPaymentWorkflow processes it for a collection without a cart: an
   * authorized action authorizes the session, a captured one (Auto) also captures its payment.
   */
  processWebhook: (
    sessionId: string,
    event: Parameters<typeof deliverWebhook>[2],
  ) => ReturnType<typeof deliverWebhook>;
  /** The session is not authorized and Medusa recorded no payment for it. */
  expectNoPayment: (sessionId: string) => Promise<void>;
  /** A new session of `amount` on the provider, authorized: its payment and the service's order. */
  authorizedPayment: (amount: number) => Promise<{
    session: Awaited<ReturnType<ReturnType<typeof moduleSandbox>["openSession"]>>["session"];
    paymentId: string;
    orderId: string;
  }>;
  /**
   * Runs `write` (a capture, cancel or refund Medusa asks for) while the service commits every order
   * write and its answer is lost: `write` must fail, the service has done it.
   */
  answerLost: (write: () => Promise<unknown>) => Promise<void>;
}

/**
 * One file's tests of the provider in synchronous mode without retries ("sync", Manual capture unless
 * `options.extra` says otherwise), on a database of its own, `purchase-auth-medusa-<slug>`, with a sandbox whose webhooks are signed with
 * `whsec-<slug>`, and a logger that keeps every line.
 */
export function syncProviderTests(
  slug: string,
  tests: (context: SyncProviderContext) => void,
  options: {
    /** More options of the "sync" provider (e.g. `captureMode: "Auto"`). */
    extra?: Record<string, unknown>;
    /** Also register "sync-auto" (`pp_purchase-auth_sync-auto`): the same, with captureMode Auto. */
    withAuto?: boolean;
  } = {},
): void {
  const dbName = `purchase-auth-medusa-${slug}`;
  const webhookSecret = `whsec-${slug}`;
  const providerId = "pp_purchase-auth_sync";
  const suite = moduleSandbox(dbName, webhookSecret);
  const { logger, lines: logLines } = recordingLogger();

  paymentModuleTests(
    suite,
    {
      dbName,
      logger,
      providers: [
        suite.providerConfig("sync", { attemptSchedule: "synchronous", maxRetries: 0, ...options.extra }),
        ...(options.withAuto
          ? [
              suite.providerConfig("sync-auto", {
                attemptSchedule: "synchronous",
                maxRetries: 0,
                captureMode: "Auto",
              }),
            ]
          : []),
      ],
    },
    ({ payment, medusaApp }) => {
      const sandbox = () => suite.state.sandbox!;
      const container = () => jobContainer(payment, medusaApp, logger);
      const sessionData = async (id: string) => (await payment.listPaymentSessions({ id }))[0]?.data;
      tests({
        payment,
        medusaApp,
        suite,
        logger,
        logLines,
        providerId,
        autoProviderId: "pp_purchase-auth_sync-auto",
        webhookSecret,
        sandbox,
        serviceOrder: (orderId) =>
          sandbox()
            .orders()
            .find((order) => order.orderId === orderId),
        sessionData,
        recorded: async (paymentId) => {
          const stored = await payment.retrievePayment(paymentId, { relations: ["captures", "refunds"] });
          const sum = (rows: Array<{ amount: unknown }> | undefined) =>
            (rows ?? []).reduce((total, row) => total + Number(row.amount), 0).toFixed(2);
          return { captured: sum(stored.captures), refunded: sum(stored.refunds) };
        },
        provider: () => providerOf(payment, providerId) as unknown as PurchaseAuthProviderService,
        container,
        runJob: (now) => reconcileUnknownOutcomes(container(), now),
        pg: () => container().resolve(ContainerRegistrationKeys.PG_CONNECTION) as Knex,
        processWebhook: async (sessionId, event) => {
          const action = await deliverWebhook(payment, providerId.replace(/^pp_/, ""), event, webhookSecret);
          if (action.action === "authorized") await payment.authorizePaymentSession(sessionId, {});
          if (action.action === "captured") {
            // As processPaymentWorkflow: a session without a payment is authorized first (auto capture).
            const [paid] = await payment.listPayments({ payment_session_id: sessionId });
            const id = paid?.id ?? (await payment.authorizePaymentSession(sessionId, {}))?.id;
            if (id) await payment.capturePayment({ payment_id: id, amount: action.data?.amount });
          }
          return action;
        },
        expectNoPayment: async (sessionId) => {
          expect((await sessionData(sessionId))?.state).not.toBe("authorized");
          expect(await payment.listPayments({ payment_session_id: sessionId })).toEqual([]);
        },
        authorizedPayment: async (amount) => {
          const { session } = await suite.openSession(payment, providerId, amount);
          const paid = await payment.authorizePaymentSession(session.id, {});
          const orderId = ((await sessionData(session.id)) as { order_id: string }).order_id;
          return { session, paymentId: paid!.id, orderId };
        },
        answerLost: async (write) => {
          sandbox().injectFault({
            kind: "drop_after_commit",
            match: { method: "POST", path: "/manage/orders" },
            count: null,
          });
          try {
            await expect(write()).rejects.toThrow();
          } finally {
            sandbox().clearFaults();
          }
        },
      });
    },
  );
}
