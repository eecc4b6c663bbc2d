import type {
  BigNumberInput,
  CreateOrderTransactionDTO,
  IPaymentModuleService,
} from "@medusajs/framework/types";
import { MedusaError, Modules, PaymentSessionStatus } from "@medusajs/framework/utils";
import { createStep, StepResponse } from "@medusajs/framework/workflows-sdk";
import { toWireAmount } from "../../providers/purchase-auth/amounts";
import { readData } from "../../providers/purchase-auth/session-data";
import {
  declineMessage,
  retryOfReason,
  STATUS_MESSAGES,
  type StoredTokenCharge,
} from "../charge-stored-token-result";
import type { StoredTokenChargePlan } from "./prepare-stored-token-charge";

/**
 * Authorizes the planned payment session through the payment module (the provider sends the
 * authorization with the session's idempotency key), then reports what the session and its payment
 * say. A decline or an unknown outcome is an answer, not a failure of the workflow: the session
 * keeps the attempt number and reason for the next run and the reconcile job. Auto-captured money is
 * recorded on the order as Medusa's own order-payment workflow does.
 */
export const authorizeStoredTokenChargeStep = createStep(
  "purchase-auth-authorize-stored-token-charge",
  async (plan: StoredTokenChargePlan, { container }): Promise<StepResponse<StoredTokenCharge>> => {
    if (plan.kind === "settled") return new StepResponse(plan.charge);
    const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
    let failure: unknown;
    try {
      await payment.authorizePaymentSession(plan.payment_session_id, {});
    } catch (error) {
      failure = error;
    }
    const session = await payment.retrievePaymentSession(plan.payment_session_id, {
      relations: ["payment", "payment.captures"],
    });
    const data = readData(session.data ?? undefined);
    const base: Omit<StoredTokenCharge, "status" | "message" | "reason" | "retry"> = {
      order_id: plan.order_id,
      attempted: true,
      payment_collection_id: session.payment_collection_id,
      payment_session_id: session.id,
      payment_id: session.payment?.id ?? null,
      customer_token: data.customer_token,
      amount: toWireAmount((session as { raw_amount?: unknown }).raw_amount ?? session.amount),
      currency_code: session.currency_code,
      service_order_id: data.order_id,
    };
    if (session.payment?.canceled_at) {
      // The payment module hands back a session's payment even once canceled, without asking the
      // provider: it was canceled (hold expired or cancelled at the service) after the plan was made.
      throw new MedusaError(
        MedusaError.Types.CONFLICT,
        `Payment ${session.payment.id} of payment session ${session.id} was canceled meanwhile (its authorization expired or was cancelled at the service): run the charge again for a new attempt.`,
      );
    }
    if (session.payment) {
      const captures = session.payment.captures ?? [];
      if (captures.length > 0) {
        // As Medusa's authorizePaymentSessionForOrderWorkflow records an auto-capture on the order,
        // and, as its addOrderTransactionStep, only captures the order has no transaction for yet:
        // the webhook's payment workflow (capturePaymentWorkflow) may have recorded them already,
        // while this run's authorization was in flight or between the prepare step and this one.
        const orders = container.resolve(Modules.ORDER);
        const existing = await orders.listOrderTransactions(
          { order_id: plan.order_id, reference: "capture", reference_id: captures.map((c) => c.id) },
          { select: ["reference_id"] },
        );
        const recorded = new Set(existing.map((transaction) => transaction.reference_id));
        const transactions: CreateOrderTransactionDTO[] = captures
          .filter((capture) => !recorded.has(capture.id))
          .map((capture) => ({
            order_id: plan.order_id,
            amount: capture.amount as BigNumberInput,
            currency_code: session.currency_code,
            reference: "capture",
            reference_id: capture.id,
          }));
        if (transactions.length > 0) await orders.addOrderTransactions(transactions);
      }
      const status = captures.length > 0 || data.state === "captured" ? "captured" : "authorized";
      return new StepResponse({
        ...base,
        status,
        reason: null,
        retry: "no",
        message: STATUS_MESSAGES[status],
      });
    }
    if (session.status === PaymentSessionStatus.PENDING_AUTHORIZATION) {
      return new StepResponse({
        ...base,
        status: "pending",
        reason: null,
        retry: "no",
        message: STATUS_MESSAGES.pending,
      });
    }
    if (data.state === "unknown") {
      return new StepResponse({
        ...base,
        status: "unknown",
        reason: null,
        retry: data.review_reason ? "no" : "same-key",
        message: data.review_reason ?? STATUS_MESSAGES.unknown,
      });
    }
    if (failure && (data.failure_reason || MedusaError.isMedusaError(failure))) {
      const reason = data.failure_reason;
      return new StepResponse({
        ...base,
        status: "declined",
        reason,
        retry: retryOfReason(reason),
        message: declineMessage(reason, (failure as Error).message),
      });
    }
    throw (
      failure ??
      new MedusaError(MedusaError.Types.UNEXPECTED_STATE, `Payment session ${session.id} was not authorized.`)
    );
  },
);
