import type { IPaymentModuleService, PaymentDTO, PaymentSessionDTO } from "@medusajs/framework/types";
import { formatCents, type WebhookEvent } from "@purchase-auth/core";
import type { FaultSpec } from "@purchase-auth/sandbox";
import { sumExact, toCentsRounded } from "../../src/providers/purchase-auth/amounts";
import { followServiceOrder } from "../../src/workflows/follow-service";
import { cancelOrder, cancelPayment, deleteCustomer } from "./convergence-medusa";
import { deliverWebhook } from "./lost-answer";
import type { SyncProviderContext } from "./sync-provider-tests";

// The world of the convergence property (convergence-property.module.test.ts): a scenario's payment
// sessions of the synchronous provider (each its own customer and token), the steps a scenario is
// made of, and how each reaches Medusa the way Medusa would run it.

/** A session's webhooks as the step delivers those not delivered yet: in order, twice, or backwards. */
export type Delivery = "all" | "duplicated" | "reversed" | "none";

export type Step =
  /**
   * The cart completes (Medusa's authorizePaymentSession): alone, twice at once (the second waits
   * for the cart's lock), or while the reconcile job runs (nothing orders those two).
   */
  | { kind: "checkout"; session: number; with: "alone" | "again" | "job"; fault?: FaultSpec }
  | { kind: "webhooks"; session: number; delivery: Delivery }
  /** One run of the reconcile job; a fault on the service's order writes (its releases). */
  | { kind: "job"; fault?: FaultSpec }
  /** With `retry`, a capture that fails is sent again once, for the same amount. */
  | { kind: "capture"; session: number; part: "rest" | "half"; fault?: FaultSpec; retry?: boolean }
  | { kind: "refund"; session: number; part: "rest" | "half"; fault?: FaultSpec }
  /** The storefront re-initiates payment: Medusa deletes the session (only before its cart completed). */
  | { kind: "delete"; session: number; fault?: FaultSpec }
  | { kind: "advance"; minutes: number }
  /** Medusa cancels the session's payment (the admin, or an order cancel's cancelPaymentStep). */
  | { kind: "cancel-payment"; session: number; fault?: FaultSpec }
  /** Medusa cancels the order the session paid (cancelOrderWorkflow, then the order-canceled subscriber). */
  | { kind: "cancel-order"; session: number; fault?: FaultSpec }
  /** Medusa deletes the session's customer (the customer-deleted subscriber, tokens cancelled or not). */
  | { kind: "delete-customer"; session: number; cancelAtService: boolean; fault?: FaultSpec };

/**
 * What the scenarios did, counted in `tally` and printed at the end: proof the property was not
 * vacuous. The last four count sessions after the settle: authorized at the service, paid in Medusa,
 * released at the service, flagged for a person's review.
 */
const COUNTED = [
  "scenarios",
  "steps",
  "faultsFired",
  "races",
  "checkoutsAuthorized",
  "checkoutsRefused",
  "webhooksDelivered",
  "jobRuns",
  "captures",
  "captureRetries",
  "refunds",
  "paymentCancels",
  "orderCancels",
  "orderCancelsRefused",
  "canceledCollectionsRewritten",
  "customersDeleted",
  "moneyStepsRefused",
  "deletes",
  "deletesRefused",
  "authorizedAtService",
  "paidInMedusa",
  "releasedAtService",
  "flaggedForReview",
] as const;

export const tally = Object.fromEntries(COUNTED.map((name) => [name, 0])) as Record<
  (typeof COUNTED)[number],
  number
>;

export function resetTally(): void {
  for (const name of COUNTED) tally[name] = 0;
}

/** A session's live payment in Medusa with the sums of its captures and refunds, in cents. */
export interface RecordedPayment {
  payment: PaymentDTO;
  captured: bigint;
  refunded: bigint;
}

export class World {
  readonly ctx: SyncProviderContext;
  readonly sessions: PaymentSessionDTO[] = [];
  /** Each session's customer (by the session's index). */
  readonly customers: string[] = [];
  readonly deletedCustomers = new Set<string>();
  /** Sessions whose Medusa order was canceled. */
  readonly canceledOrders = new Set<string>();
  /** The sandbox's event ids delivered to Medusa so far. */
  readonly delivered = new Set<string>();
  /** Each session's cart lock: the tail of the authorizations queued on it. */
  readonly #cartLocks = new Map<string, Promise<void>>();

  constructor(ctx: SyncProviderContext) {
    this.ctx = ctx;
  }

  get payment(): IPaymentModuleService {
    return this.ctx.payment;
  }

  /**
   * Opens the scenario's sessions, one amount each (distinct across the run), of the Auto capture
   * provider where `auto` says so.
   */
  async open(amounts: string[], auto: boolean[] = []): Promise<void> {
    for (const [index, amount] of amounts.entries()) {
      const provider = auto[index] ? this.ctx.autoProviderId : this.ctx.providerId;
      const { session, customer } = await this.ctx.suite.openSession(this.payment, provider, amount);
      this.sessions.push(session);
      this.customers.push(customer.id);
    }
  }

  /** The job's clock: the service's (virtual) time, which only moves forward. */
  now(): Date {
    return new Date(this.ctx.sandbox().now());
  }

  async run(step: Step): Promise<void> {
    const session = "session" in step ? this.sessions[step.session % this.sessions.length]! : undefined;
    switch (step.kind) {
      case "checkout":
        if (step.with !== "alone") tally.races++;
        return this.#withFault(step.fault, () =>
          Promise.all([
            this.#checkout(session!.id),
            ...(step.with === "again" ? [this.#checkout(session!.id)] : []),
            ...(step.with === "job" ? [this.runJob()] : []),
          ]),
        );
      case "webhooks":
        if (step.delivery !== "none") await this.deliver(this.#pendingEvents(session!.id), step.delivery);
        return;
      case "job":
        return this.#withFault(step.fault, () => this.runJob());
      case "capture":
        return this.#withFault(step.fault, () => this.#move("capture", session!.id, step.part, step.retry));
      case "refund":
        return this.#withFault(step.fault, () => this.#move("refund", session!.id, step.part));
      case "cancel-payment":
        return this.#withFault(step.fault, () => cancelPayment(this, session!.id));
      case "cancel-order":
        return this.#withFault(step.fault, () => cancelOrder(this, session!.id));
      case "delete-customer":
        return this.#withFault(step.fault, () => deleteCustomer(this, step.session, step.cancelAtService));
      case "delete":
        return this.#withFault(step.fault, () => this.#delete(session!.id));
      case "advance":
        this.ctx.sandbox().advanceClock(step.minutes * 60_000);
        await this.ctx.sandbox().settle();
    }
  }

  async runJob(): Promise<void> {
    tally.jobRuns++;
    await this.ctx.runJob(this.now());
  }

  /** Runs `step` with `fault` injected right before it, cleared after it; counts how often it fired. */
  async #withFault(fault: FaultSpec | undefined, step: () => Promise<unknown>): Promise<void> {
    const sandbox = this.ctx.sandbox();
    const faultId = fault === undefined ? undefined : sandbox.injectFault(fault);
    try {
      await step();
    } finally {
      if (faultId !== undefined) {
        // A fault that fired its whole count is no longer listed.
        tally.faultsFired +=
          sandbox.faults().find((view) => view.faultId === faultId)?.fired ?? fault!.count!;
        sandbox.clearFaults();
      }
    }
  }

  /**
   * Medusa authorizes a cart's session only under the cart's lock: cart completion and the webhook's
   * payment workflow (processPaymentWorkflow) both take it (acquireLockStep on the cart id), so two
   * authorizations of one session never run at once. Without the lock, the loser's payment insert
   * fails and Medusa's compensation cancels the order the winner's payment holds.
   */
  async #authorizeLocked(sessionId: string): Promise<unknown> {
    const before = this.#cartLocks.get(sessionId) ?? Promise.resolve();
    const run = before.then(() => this.payment.authorizePaymentSession(sessionId, {}));
    this.#cartLocks.set(
      sessionId,
      run.then(
        () => undefined,
        () => undefined,
      ),
    );
    return await run;
  }

  async #checkout(sessionId: string): Promise<void> {
    try {
      await this.#authorizeLocked(sessionId);
      tally.checkoutsAuthorized++;
    } catch {
      // Declined, unknown, refused while settled, or gone: Medusa completes nothing.
      tally.checkoutsRefused++;
    }
  }

  /** The session's live (not canceled) payment in Medusa, if any. */
  async livePayment(sessionId: string): Promise<RecordedPayment | undefined> {
    const payments = await this.payment.listPayments(
      { payment_session_id: sessionId },
      { relations: ["captures", "refunds"] },
    );
    const live = payments.find((p) => !p.canceled_at);
    if (live === undefined) return undefined;
    const cents = (rows: Array<{ raw_amount?: unknown; amount: unknown }> | undefined) =>
      toCentsRounded(sumExact((rows ?? []).map((row) => row.raw_amount ?? row.amount)));
    return {
      payment: live,
      captured: cents(live.captures as never),
      refunded: cents(live.refunds as never),
    };
  }

  /** A merchant captures (or refunds) part or all of what is left, through the payment module. */
  async #move(
    kind: "capture" | "refund",
    sessionId: string,
    part: "rest" | "half",
    retry = false,
  ): Promise<void> {
    // The drawn session first, else another of the scenario's with something left to move.
    let recorded: RecordedPayment | undefined;
    let left = 0n;
    for (const id of [sessionId, ...this.sessions.map((s) => s.id).filter((id) => id !== sessionId)]) {
      // A merchant does not capture for an order canceled in Medusa (refunds go on).
      if (kind === "capture" && this.canceledOrders.has(id)) continue;
      recorded = await this.livePayment(id);
      if (recorded === undefined) continue;
      const total = toCentsRounded(recorded.payment.raw_amount ?? recorded.payment.amount);
      left = kind === "capture" ? total - recorded.captured : recorded.captured - recorded.refunded;
      if (left > 0n) break;
    }
    if (recorded === undefined || left <= 0n) return;
    const amount = part === "half" && left > 1n ? left / 2n : left;
    const send = () =>
      kind === "capture"
        ? this.payment.capturePayment({ payment_id: recorded.payment.id, amount: formatCents(amount) })
        : this.payment.refundPayment({ payment_id: recorded.payment.id, amount: formatCents(amount) });
    try {
      await send();
      tally[kind === "capture" ? "captures" : "refunds"]++;
    } catch {
      tally.moneyStepsRefused++;
      if (!retry) return;
      // The merchant captures again, the same amount (Medusa deleted the failed capture's record).
      tally.captureRetries++;
      await send().then(
        () => tally.captures++,
        () => tally.moneyStepsRefused++,
      );
    }
  }

  /**
   * The storefront re-initiates payment: Medusa deletes the session. Only a session whose cart did
   * not complete (no payment in Medusa) is ever replaced; a completed cart's session is not.
   */
  async #delete(sessionId: string): Promise<void> {
    const [stored] = await this.payment.listPaymentSessions({ id: sessionId });
    if (stored === undefined) return;
    if ((await this.payment.listPayments({ payment_session_id: sessionId })).length > 0) return;
    try {
      await this.payment.deletePaymentSession(sessionId);
      tally.deletes++;
    } catch {
      tally.deletesRefused++;
    }
  }

  /** Every event the service emitted about the scenario's sessions: their authorizations and orders. */
  events(): WebhookEvent[] {
    const sandbox = this.ctx.sandbox();
    const ids = new Set(this.sessions.map((s) => s.id));
    const orderIds = new Set(
      sandbox
        .authorizations()
        .filter((a) => a.actionReference !== undefined && ids.has(a.actionReference))
        .flatMap((a) => (a.orderId === undefined ? [] : [a.orderId])),
    );
    return sandbox
      .events()
      .map((entry) => entry.event)
      .filter((event) => {
        const data = event.data as { actionReference?: string; orderId?: string };
        if (event.type.startsWith("authorization."))
          return data.actionReference !== undefined && ids.has(data.actionReference);
        return event.type.startsWith("order.") && data.orderId !== undefined && orderIds.has(data.orderId);
      });
  }

  #pendingEvents(sessionId: string): WebhookEvent[] {
    const orderIds = new Set(
      this.ctx
        .sandbox()
        .authorizations()
        .filter((a) => a.actionReference === sessionId)
        .flatMap((a) => (a.orderId === undefined ? [] : [a.orderId])),
    );
    return this.events().filter((event) => {
      const data = event.data as { actionReference?: string; orderId?: string };
      const ours =
        data.actionReference === sessionId || (data.orderId !== undefined && orderIds.has(data.orderId));
      return ours && !this.delivered.has(event.id);
    });
  }

  /**
   * Delivers `events` as Medusa processes a webhook: the provider's action, then for "authorized"
   * the payment workflow authorizes the session; the plugin's subscriber follows the service's order
   * events. A handler that throws is what Medusa's local event bus logs and drops.
   */
  async deliver(events: WebhookEvent[], delivery: Delivery = "all"): Promise<void> {
    const ordered = delivery === "reversed" ? [...events].reverse() : events;
    for (const event of ordered) {
      for (let time = 0; time < (delivery === "duplicated" ? 2 : 1); time++) {
        this.delivered.add(event.id);
        tally.webhooksDelivered++;
        await this.#processWebhook(event).catch(() => undefined);
      }
    }
  }

  async #processWebhook(event: WebhookEvent): Promise<void> {
    const { payment, webhookSecret } = this.ctx;
    const providerKey = this.ctx.providerId.replace(/^pp_/, "");
    const action = await deliverWebhook(payment, providerKey, event, webhookSecret);
    const sessionId = (action.data as { session_id?: string } | undefined)?.session_id;
    if (action.action === "authorized" && sessionId) await this.#authorizeLocked(sessionId);
    if (action.action === "captured" && sessionId) {
      // processPaymentWorkflow's auto capture: a session without a payment is authorized first, then
      // the payment is captured for the webhook's amount (nothing new once fully captured).
      const [paid] = await this.payment.listPayments({ payment_session_id: sessionId });
      const id = paid?.id ?? ((await this.#authorizeLocked(sessionId)) as { id?: string } | null)?.id;
      const amount = (action.data as { amount?: string } | undefined)?.amount;
      if (id) await this.payment.capturePayment({ payment_id: id, amount });
    }
    if (event.type.startsWith("order.")) {
      await followServiceOrder(this.ctx.container(), (event.data as { orderId: string }).orderId);
    }
  }
}
