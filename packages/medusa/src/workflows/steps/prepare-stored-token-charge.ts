import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { MedusaError, Modules } from "@medusajs/framework/utils";
import { createStep, StepResponse } from "@medusajs/framework/workflows-sdk";
import {
  createOrderPaymentCollectionWorkflow,
  createPaymentSessionsWorkflow,
} from "@medusajs/medusa/core-flows";
import { toWireAmount } from "../../providers/purchase-auth/amounts";
import { orderLinesFromCart } from "../../providers/purchase-auth/order-lines";
import { isPurchaseAuthProviderId } from "../../providers/purchase-auth/provider-ids";
import { readData } from "../../providers/purchase-auth/session-data";
import {
  chooseTokenToCharge,
  type OrderToCharge,
  paymentRecordsOf,
  readOrderToCharge,
  type TokenChoice,
} from "../charge-stored-token-order";
import {
  declineMessage,
  retryOfReason,
  STATUS_MESSAGES,
  type StoredTokenCharge,
} from "../charge-stored-token-result";

export interface PrepareStoredTokenChargeInput {
  order_id: string;
  provider_id: string;
  customer_token?: string;
  new_attempt?: boolean;
}

export type StoredTokenChargePlan =
  /** Nothing to send: an earlier run settled it, or the token cannot be charged. */
  | { kind: "settled"; charge: StoredTokenCharge }
  /** Authorize this payment session (a new one, or the earlier one: same session, same keys). */
  | { kind: "authorize"; order_id: string; payment_session_id: string };

const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : toWireAmount(value as never);

function settled(
  order: OrderToCharge,
  fields: Partial<StoredTokenCharge> & Pick<StoredTokenCharge, "status" | "message">,
): StoredTokenChargePlan {
  return {
    kind: "settled",
    charge: {
      order_id: order.id,
      attempted: false,
      payment_collection_id: null,
      payment_session_id: null,
      payment_id: null,
      customer_token: null,
      amount: null,
      currency_code: order.currency_code,
      service_order_id: null,
      reason: null,
      retry: "no",
      ...fields,
    },
  };
}

/**
 * Decides what a run of the charge workflow does for an order, from what Medusa holds (the order's
 * payment collections are the charge's idempotency record, under the workflow's lock):
 * - a payment of this provider exists: report it, send nothing (running twice charges once);
 * - the latest session is pending at the service (202): report it, the webhook finishes it;
 * - the latest session's outcome is unknown, it was never answered, or the service authorized it
 *   without Medusa recording a payment: authorize THAT session again, so its idempotency key (from
 *   the session id and attempt) replays the first outcome;
 * - its decline is worth retrying (PAYMENT_FAILED, SERVICE_UNAVAILABLE): authorize it again, as the
 *   next attempt with a new key (the provider saved the attempt number);
 * - its decline is not worth retrying: report the reason and stop, unless another token is charged
 *   now or `new_attempt` says the cause was fixed (then a new session: new keys);
 * - its payment was canceled (the hold expired or was cancelled at the service): like a canceled
 *   session, a new session (new keys), so the order is charged anew;
 * - otherwise: a payment collection for the order (reused when it has no payment) and a new session
 *   for the customer's token, through Medusa's own payment-session workflow, so the provider's
 *   initiate, authorize, webhooks and reconciliation apply unchanged.
 * Nothing here is undone when a later step fails: the sessions are the record the next run and the
 * reconcile job need.
 */
export const prepareStoredTokenChargeStep = createStep(
  "purchase-auth-prepare-stored-token-charge",
  async (input: PrepareStoredTokenChargeInput, { container }) => {
    const order = await readOrderToCharge(container, input.order_id);
    if (order.status === "canceled") {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `Order ${order.id} is canceled: it cannot be charged.`,
      );
    }
    if (!order.customer_id) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `Order ${order.id} has no customer: only a customer's stored token can be charged.`,
      );
    }
    const { collections, sessions, payments } = paymentRecordsOf(order);

    const paid = payments.find((p) => !p.canceled_at);
    if (paid) {
      if (!isPurchaseAuthProviderId(paid.provider_id)) {
        throw new MedusaError(
          MedusaError.Types.NOT_ALLOWED,
          `Order ${order.id} is already paid with ${paid.provider_id} (payment ${paid.id}).`,
        );
      }
      const data = readData(paid.data ?? undefined);
      const status = paid.captured_at || data.state === "captured" ? "captured" : "authorized";
      return new StepResponse(
        settled(order, {
          status,
          message: STATUS_MESSAGES[status],
          payment_collection_id: paid.collection_id,
          payment_session_id: paid.payment_session_id ?? data.session_id,
          payment_id: paid.id,
          customer_token: data.customer_token,
          amount: text(paid.amount),
          currency_code: paid.currency_code,
          service_order_id: data.order_id,
        }),
      );
    }

    const latest = sessions.find(
      (s) => isPurchaseAuthProviderId(s.provider_id) && s.provider_id === input.provider_id,
    );
    const latestData = latest ? readData(latest.data ?? undefined) : undefined;
    const about = latest
      ? {
          payment_collection_id: latest.collection_id,
          payment_session_id: latest.id,
          customer_token: latestData!.customer_token,
          amount: latestData!.amount,
          currency_code: latest.currency_code,
          service_order_id: latestData!.order_id,
        }
      : {};
    let choice: TokenChoice | undefined;
    if (latest && latestData) {
      // A session whose payment Medusa canceled (the hold expired or was cancelled at the service)
      // keeps the state "authorized" in its data: it is over like a canceled session, and
      // authorizing it again would only hand back the canceled payment, charging nothing.
      const paymentCanceled = payments.some((p) => p.payment_session_id === latest.id && p.canceled_at);
      const state = paymentCanceled ? "canceled" : latestData.state;
      if (state === "pending_authorization") {
        return new StepResponse(
          settled(order, { ...about, status: "pending", message: STATUS_MESSAGES.pending }),
        );
      }
      if (state === "unknown" && latestData.review_reason) {
        return new StepResponse(
          settled(order, { ...about, status: "unknown", retry: "no", message: latestData.review_reason }),
        );
      }
      const declined = state === "failed" || (state !== "unknown" && latestData.failure_reason !== null);
      // Unknown, never answered, or authorized at the service without a Medusa payment yet (a
      // webhook's payment not recorded): the same session again, whose keys replay the first answer.
      if (!declined && state !== "canceled") {
        return new StepResponse(authorize(order.id, latest.id));
      }
      if (declined) {
        const reason = latestData.failure_reason;
        const retry = retryOfReason(reason);
        if (retry === "new-attempt" && state !== "failed") {
          return new StepResponse(authorize(order.id, latest.id));
        }
        if (retry === "no" && !input.new_attempt) {
          choice = await chooseTokenToCharge(container, tokenInput(order, input));
          if (choice.customer_token === latestData.customer_token) {
            return new StepResponse(
              settled(order, {
                ...about,
                status: "declined",
                reason,
                retry,
                message: declineMessage(reason),
              }),
            );
          }
        }
      }
    }

    choice ??= await chooseTokenToCharge(container, tokenInput(order, input));
    if (choice.kind === "refused") {
      return new StepResponse(
        settled(order, {
          status: "declined",
          customer_token: choice.customer_token,
          reason: choice.reason,
          retry: "no",
          message: declineMessage(choice.reason),
        }),
      );
    }
    const collectionId = await collectionToCharge(container, order, collections);
    const sessionId = await newSession(
      container,
      order,
      collectionId,
      input.provider_id,
      choice.customer_token,
    );
    return new StepResponse(authorize(order.id, sessionId));
  },
);

function authorize(orderId: string, sessionId: string): StoredTokenChargePlan {
  return { kind: "authorize", order_id: orderId, payment_session_id: sessionId };
}

function tokenInput(order: OrderToCharge, input: PrepareStoredTokenChargeInput) {
  return {
    customer_id: order.customer_id!,
    provider_id: input.provider_id,
    currency_code: order.currency_code,
    ...(input.customer_token ? { customer_token: input.customer_token } : {}),
  };
}

/** A collection of the order without a payment (its amount brought to what is due), or a new one. */
async function collectionToCharge(
  container: MedusaContainer,
  order: OrderToCharge,
  collections: ReturnType<typeof paymentRecordsOf>["collections"],
): Promise<string> {
  const due = order.summary?.raw_pending_difference ?? order.summary?.pending_difference ?? order.total;
  const dueText = text(due);
  if (!dueText || Number(dueText) <= 0) {
    throw new MedusaError(MedusaError.Types.NOT_ALLOWED, `Order ${order.id} has nothing left to pay.`);
  }
  const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const reusable = collections.find(
    (c) => (c.payments ?? []).length === 0 && c.status !== "canceled" && c.status !== "completed",
  );
  if (reusable) {
    if (text(reusable.amount) !== dueText) {
      await payment.updatePaymentCollections(reusable.id, { amount: dueText as never });
    }
    return reusable.id;
  }
  const { result } = await createOrderPaymentCollectionWorkflow(container).run({
    input: { order_id: order.id, amount: dueText as never },
  });
  return result[0]!.id;
}

/**
 * A payment session for the customer's token, created by Medusa's payment-session workflow (it
 * finds the customer's account holder, so the provider charges only this customer's tokens). The
 * order's lines go into its data, as the cart-completion middleware does for a checkout.
 */
async function newSession(
  container: MedusaContainer,
  order: OrderToCharge,
  collectionId: string,
  providerId: string,
  customerToken: string,
): Promise<string> {
  const { result: session } = await createPaymentSessionsWorkflow(container).run({
    input: {
      payment_collection_id: collectionId,
      provider_id: providerId,
      customer_id: order.customer_id!,
      data: { customer_token: customerToken },
    },
  });
  const lines = orderLinesFromCart(order);
  if (lines) {
    const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
    await payment.updatePaymentSession({
      id: session.id,
      amount: session.amount as never,
      currency_code: session.currency_code,
      data: { ...(session.data ?? {}), order_lines: lines },
    });
  }
  return session.id;
}
