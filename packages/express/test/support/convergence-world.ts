import { randomUUID } from "node:crypto";
import type { FaultSpec } from "@purchase-auth/sandbox";
import { type ChargeStore, MemoryChargeStore } from "../../src/index.js";
import type { OperationRecord } from "../../src/stores/types.js";
import {
  type Customer,
  call,
  charge,
  type ShopApp,
  type ShopData,
  staffOnly,
  startShopApp,
  WEBHOOK_SECRET,
} from "./shop.js";

// The world of the convergence property (convergence-property.test.ts): one merchant's shop, two
// instances of it on one store (the requests of a step go to one of them, and both receive every
// webhook), a customer with three carts, the steps a scenario is made of, and what the shop answered.

/** Each cart: one line of beans, 2 × 24.90 = 49.80. */
export const CARTS = 3;
export type Operation = "capture" | "capture_rest" | "cancel" | "refund";
/** Which of the shop's two instances a step's requests go to. */
export type Instance = 0 | 1;
export type Action =
  | { kind: "pay"; instance: Instance; cart: number; twice: boolean; fault?: FaultSpec }
  | {
      kind: "press";
      instance: Instance;
      cart: number;
      operation: Operation;
      sequence: SequenceStyle;
      fault?: FaultSpec;
      /** Sends before the back office walks away without an answer: 1, or 3 (retries after a 5xx). */
      tries: number;
      /** Whether the back office comes back for this press if its answer never came (else the reconciler must). */
      comesBack: boolean;
    };

/**
 * How the back office names a press: an id per press, the charge's counter + 1 as the page showed
 * it (two pages rendered at once show the same number), or nothing (capture of the rest and cancel
 * only: the router counts).
 */
export type SequenceStyle = "id" | "counted" | "none";
export type Step =
  | Action
  /** Two actions at once (a shopper's retry meeting a merchant's press, two instances, one cart). */
  | { kind: "race"; actions: [Action, Action] }
  /** The back office sends an earlier press again, with its sequence (a retry job, a reload). */
  | { kind: "again"; instance: Instance; press: number; fault?: FaultSpec }
  | { kind: "restart"; instance: Instance }
  | { kind: "reconcile"; instance: Instance }
  | { kind: "webhooks"; duplicate: boolean; outOfOrder: boolean }
  | { kind: "advance"; minutes: number };

/** What the scenarios did, printed at the end: proof the property was not vacuous. */
export const tally = {
  scenarios: 0,
  steps: 0,
  faultsFired: 0,
  /** Of which on capture, cancel and refund. */
  orderWriteFaultsFired: 0,
  restarts: 0,
  races: 0,
  presses: 0,
  pressesDone: 0,
  pressesRefused: 0,
  authorized: 0,
  /** Presses whose answer never came and that nobody sent again: left to the reconciler. */
  leftToReconciler: 0,
  /** Merchant writes the reconciler's passes sent again (inside the window), by their reports. */
  reconcilerResent: 0,
  /** Merchant writes its passes settled without sending them (from the log or the order). */
  reconcilerAnsweredFromLog: 0,
  /** Of the resends made once faults were cleared, those the service answered: done or refused. */
  resendsSettled: 0,
  /** Pay answers "nothing happened" (503 service-unavailable) whose attempt the shop recorded failed. */
  notSentFailed: 0,
};

/** Starts a new count (each property counts its own scenarios). */
export function resetTally(): void {
  for (const key of Object.keys(tally) as Array<keyof typeof tally>) tally[key] = 0;
}

/** One press of a merchant's button, retried with its sequence after a 5xx or a network error. */
export interface Press {
  cart: number;
  operation: Operation;
  /** Unique in the scenario, so the service's operations tell which press moved money. */
  amount?: string;
  style: SequenceStyle;
  /** Chosen at the first send and sent again with every retry (undefined for style "none"). */
  sequence?: string | number;
  /** Every final (non-5xx) answer, in order: a press sent again is answered again. */
  answers: Array<{ status: number; type?: string; outcome?: string }>;
  /** Some send got a 5xx or no answer at all. */
  uncertain?: boolean;
  /** Whether the back office sends it again at the end when it never got an answer. */
  comesBack: boolean;
}

/** A scenario's world: one merchant's shop (two instances, one store), its carts, and what it answered. */
export class World {
  readonly data: ShopData;
  /** Each instance's store: two views of one database, or one memory store twice. */
  readonly stores: readonly [ChargeStore, ChargeStore];
  readonly customer: Customer;
  readonly carts: string[];
  readonly presses: Press[] = [];
  /** Every 2xx the shop answered a shopper, with the charge it showed. */
  readonly paidAnswers: Array<{ cart: number; status: string; authorizationId?: string }> = [];
  /**
   * The keys of attempts the shop recorded failed because none of their sends reached the service,
   * read right after a shopper was told "nothing happened": the service must never hold a
   * succeeded authorization under one (the reconciler must not have sent it since).
   */
  readonly notSentKeys = new Set<string>();
  /** The references the shop raised an alert about. */
  readonly alerted = new Set<string>();
  /** Every alert's reference and message, in order. */
  readonly alerts: Array<{ reference: string; message: string }> = [];
  readonly apps: ShopApp[] = [];
  /**
   * Writes the reconciler sent again once faults were cleared that the service's answer did not
   * settle (their entry not done nor refused right after the pass): each a discrepancy.
   */
  readonly unsettledResends: string[] = [];
  /** Each instance's port, kept across restarts (the sandbox's webhooks point there). */
  readonly #ports = [0, 0];
  #nextCents = 101;

  readonly captureMode: "Auto" | "Manual";

  constructor(data: ShopData, captureMode: "Auto" | "Manual", stores?: readonly [ChargeStore, ChargeStore]) {
    this.data = data;
    this.captureMode = captureMode;
    const shared = new MemoryChargeStore();
    this.stores = stores ?? [shared, shared];
    // Funds for two of the three carts: the third is declined until money is released (a double
    // charge would show as a decline too).
    this.customer = data.customer({ funds: "99.60" });
    this.carts = Array.from({ length: CARTS }, () => data.cart(this.customer));
  }

  /** Starts both instances and points the sandbox's webhooks at both. */
  async start(): Promise<void> {
    for (const instance of [0, 1] as const) await this.#start(instance);
    this.data.sandbox.setWebhooks({
      merchantId: this.data.merchant.merchantId,
      urls: this.apps.map((app) => `${app.url}/payments/webhooks`),
      secrets: [WEBHOOK_SECRET],
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.apps.map((app) => app.close()));
  }

  /** Starts one instance; a restart listens where the sandbox's webhooks already point. */
  async #start(instance: Instance): Promise<void> {
    const app = await startShopApp(this.data, {
      port: this.#ports[instance],
      receiveWebhooks: false,
      allowedTimings: ["asap"],
      store: this.stores[instance],
      captureMode: this.captureMode,
      authorizeMerchant: staffOnly,
      reconcileIntervalMs: 0,
      now: () => this.data.sandbox.now(),
      onAlert: (alert) => {
        this.alerted.add(alert.reference);
        this.alerts.push({ reference: alert.reference, message: alert.message });
      },
      clientOptions: { maxRetries: 1, timeoutMs: 2_000 },
    });
    this.apps[instance] = app;
    this.#ports[instance] = Number(new URL(app.url).port);
  }

  async run(step: Step): Promise<void> {
    const { sandbox } = this.data;
    switch (step.kind) {
      case "pay":
      case "press":
        await this.#act(step);
        return;
      case "again": {
        const press = this.presses[step.press % Math.max(1, this.presses.length)];
        if (press === undefined) return;
        const app = this.apps[step.instance]!;
        await this.#withFault(step.fault, () => this.#press(app, press));
        return;
      }
      case "race":
        tally.races++;
        await Promise.all(step.actions.map((action) => this.#act(action)));
        return;
      case "restart":
        tally.restarts++;
        await this.apps[step.instance]!.close();
        await this.#start(step.instance);
        return;
      case "reconcile":
        await this.#reconcile(step.instance, false);
        return;
      case "webhooks":
        sandbox.setWebhookDelivery({ duplicate: step.duplicate, outOfOrder: step.outOfOrder });
        return;
      case "advance":
        sandbox.advanceClock(step.minutes * 60_000);
        await sandbox.settle();
    }
  }

  #act(action: Action): Promise<void> {
    const app = this.apps[action.instance]!;
    if (action.kind === "pay") {
      const { cart, twice } = action;
      return this.#withFault(action.fault, () =>
        Promise.all(Array.from({ length: twice ? 2 : 1 }, () => this.#pay(app, cart))),
      );
    }
    const press = this.#newPress(action.cart, action.operation, action.sequence, action.comesBack);
    return this.#withFault(action.fault, () => this.#press(app, press, action.tries));
  }

  /** Runs `step` with `fault` injected before it (left active after it) and counts how often it fired. */
  async #withFault(fault: FaultSpec | undefined, step: () => Promise<unknown>): Promise<void> {
    const { sandbox } = this.data;
    const faultId = fault === undefined ? undefined : sandbox.injectFault(fault);
    await step();
    if (faultId === undefined) return;
    // A fault that fired its count is no longer listed.
    const fired = sandbox.faults().find((view) => view.faultId === faultId)?.fired ?? fault!.count!;
    tally.faultsFired += fired;
    if (fault?.match?.path?.includes("/orders")) tally.orderWriteFaultsFired += fired;
  }

  /** A shopper as the README has them: the same POST again after a 5xx or a network error. */
  async #pay(app: ShopApp, cart: number, tries = 3): Promise<void> {
    // The last cart is paid "as soon as possible": accepted (202), its outcome told by webhook.
    const timing = cart === CARTS - 1 ? "asap" : "now";
    for (let attempt = 0; attempt < tries; attempt++) {
      const reply = await charge(app, this.customer, { cartId: this.carts[cart], timing }).catch(
        () => undefined,
      );
      if (reply?.json?.type === "urn:purchase-auth:problem:service-unavailable")
        await this.#toldNotSent(cart);
      if (reply === undefined || reply.status >= 500) continue;
      if (reply.status < 300) {
        this.paidAnswers.push({
          cart,
          status: reply.json.status,
          authorizationId: reply.json.authorizationId,
        });
      }
      return;
    }
  }

  /** Notes the key of the cart's attempt if the shop recorded it failed with nothing sent. */
  async #toldNotSent(cart: number): Promise<void> {
    const stored = await this.stores[0].findByReference(this.data.referenceOf(this.carts[cart]!));
    const pending = stored?.pendingAuthorization;
    if (stored?.status !== "failed" || stored.reason !== "SERVICE_UNAVAILABLE" || pending === undefined)
      return;
    if ((pending.sends ?? 1) !== pending.undelivered) return;
    tally.notSentFailed++;
    this.notSentKeys.add(pending.idempotencyKey);
  }

  #newPress(cart: number, operation: Operation, style: SequenceStyle, comesBack: boolean): Press {
    const press: Press = { cart, operation, style, answers: [], comesBack };
    if (operation === "capture" || operation === "refund") {
      press.amount = (this.#nextCents++ / 100).toFixed(2);
      // A write with an amount must be named.
      if (style === "none") press.style = "id";
    }
    this.presses.push(press);
    return press;
  }

  /** The back office as the README has it: the same sequence again after a 5xx or a network error. */
  async #press(app: ShopApp, press: Press, tries = 3): Promise<void> {
    const charge = await this.stores[0].findByReference(this.data.referenceOf(this.carts[press.cart]!));
    if (charge?.authorizationId === undefined) return;
    const name = press.operation === "capture_rest" ? "capture" : press.operation;
    if (press.sequence === undefined && press.style !== "none") {
      press.sequence = press.style === "id" ? `press-${randomUUID()}` : charge.operations[name] + 1;
    }
    const body: { amount?: string; sequence?: string | number } = {};
    if (press.amount !== undefined) body.amount = press.amount;
    if (press.sequence !== undefined) body.sequence = press.sequence;
    for (let attempt = 0; attempt < tries; attempt++) {
      const reply = await call(app, "POST", `/charges/${charge.authorizationId}/${name}`, {
        merchant: true,
        body,
      }).catch(() => undefined);
      if (reply !== undefined && reply.status < 500) {
        press.answers.push({
          status: reply.status,
          type: reply.json?.type,
          outcome: reply.json?.operation?.outcome,
        });
        tally.presses++;
        if (reply.status === 200) tally.pressesDone++;
        else tally.pressesRefused++;
        return;
      }
      // A 5xx or no answer: the write may have reached the service.
      press.uncertain = true;
    }
  }

  /**
   * A reconcile pass of `instance`, its writes tallied. With `faultsCleared`, every write it sent
   * again (its entry's count of sends grew: no press runs meanwhile) must be answered by the
   * service: done or refused, never left unknown.
   */
  async #reconcile(instance: Instance, faultsCleared: boolean): Promise<void> {
    const before = await this.#sendCounts();
    const { writes } = await this.apps[instance]!.router.reconcile();
    tally.reconcilerResent += writes.resent;
    tally.reconcilerAnsweredFromLog += writes.examined - writes.resent;
    if (!faultsCleared) return;
    const after = await this.#entries();
    for (const [key, sends] of before) {
      const entry = after.get(key);
      if (entry === undefined || (entry.sends ?? 1) <= sends) continue;
      if (entry.state === "done" || entry.state === "refused") tally.resendsSettled++;
      else this.unsettledResends.push(`${key}: sent again by the reconciler, left ${entry.state}`);
    }
  }

  /** The sends counted on every entry still `sent`, by reference and entry. */
  async #sendCounts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const [key, entry] of await this.#entries()) {
      if (entry.state === "sent") counts.set(key, entry.sends ?? 1);
    }
    return counts;
  }

  async #entries(): Promise<Map<string, OperationRecord>> {
    const entries = new Map<string, OperationRecord>();
    for (const cartId of this.carts) {
      const reference = this.data.referenceOf(cartId);
      const stored = await this.stores[0].findByReference(reference);
      for (const [id, entry] of Object.entries(stored?.operationLog ?? {}))
        entries.set(`${reference} ${id}`, entry);
    }
    return entries;
  }

  /** Faults off, webhooks delivered as they are, and the shop given every chance to learn the truth. */
  async settle(): Promise<void> {
    const { sandbox } = this.data;
    sandbox.clearFaults();
    sandbox.setWebhookDelivery({ duplicate: false, outOfOrder: false });
    // The merchant comes back, with its sequence, for some of the presses whose answer never came;
    // the others are the reconciler's to send again, or to settle once their window has passed.
    for (const press of this.presses.filter((press) => press.answers.length === 0)) {
      if (press.comesBack) await this.#press(this.apps[0]!, press, 1);
      else if (press.uncertain) tally.leftToReconciler++;
    }
    for (const minutes of [0, 2, 10, 30, 120, 480]) {
      if (minutes > 0) sandbox.advanceClock(minutes * 60_000);
      await sandbox.settle();
      for (const instance of [0, 1] as const) await this.#reconcile(instance, true);
      await sandbox.settle();
    }
  }
}
