import { MedusaError } from "@medusajs/framework/utils";
import { isPurchaseAuthProviderId } from "./provider-ids";
import { laterState, type PurchaseAuthData, readData, writeData } from "./session-data";

// Two facts Medusa does not pass to a provider live in the payment module's own records, which the
// provider reaches through the module's container (its cradle):
// - capturePayment gets no amount; the capture Medusa just committed carries it, and its id is the
//   call's idempotency key. Reading it is how a partial capture captures the right amount.
// - a webhook's outcome (the order id of an authorization answered 202) must reach the session's
//   data before Medusa's payment workflow authorizes the session, since that workflow hands the
//   provider the stored data only.
// Both use the payment module's internal services; the peer range pins the Medusa versions they
// were tested with.

interface CaptureRecord {
  id: string;
  amount?: unknown;
  raw_amount?: unknown;
  payment_id?: string;
}

interface SessionRecord {
  id: string;
  provider_id: string;
  data: Record<string, unknown> | null;
}

interface CaptureService {
  retrieve(id: string, config?: { select?: string[] }): Promise<CaptureRecord>;
  list(filters: { payment_id: string }, config?: { select?: string[] }): Promise<CaptureRecord[]>;
}

interface SessionService {
  retrieve(id: string, config?: { select?: string[] }): Promise<SessionRecord>;
  update(data: { id: string; data: Record<string, unknown> }): Promise<unknown>;
}

function resolve<T>(container: Record<string, unknown>, name: string): T {
  try {
    const service = container[name];
    if (service) return service as T;
  } catch {
    // awilix throws for an unknown registration
  }
  throw new Error(`purchase-auth: the payment module has no ${name}; this Medusa version is not supported`);
}

export class PaymentModuleRecords {
  readonly #container: Record<string, unknown>;

  constructor(container: Record<string, unknown>) {
    this.#container = container;
  }

  /** The amount of the capture Medusa recorded (raw BigNumber value), by its id. */
  async captureAmount(captureId: string): Promise<unknown> {
    const capture = await resolve<CaptureService>(this.#container, "captureService").retrieve(captureId, {
      select: ["id", "amount", "raw_amount"],
    });
    return capture.raw_amount ?? capture.amount;
  }

  /**
   * The captures Medusa recorded for the payment of capture `captureId`, that one included (it is
   * committed before the provider is called). Their sum, rounded once, is the captured total to aim
   * at: rounding each capture separately can aim a cent above the order's total.
   */
  async capturesOfPaymentOf(captureId: string): Promise<unknown[]> {
    const captures = resolve<CaptureService>(this.#container, "captureService");
    const capture = await captures.retrieve(captureId, {
      select: ["id", "payment_id", "amount", "raw_amount"],
    });
    if (!capture.payment_id) return [capture.raw_amount ?? capture.amount];
    const all = await captures.list(
      { payment_id: capture.payment_id },
      { select: ["id", "amount", "raw_amount"] },
    );
    return all.map((entry) => entry.raw_amount ?? entry.amount);
  }

  /** The payment session's stored data (undefined when there is no such session of this provider). */
  async sessionData(sessionId: string): Promise<PurchaseAuthData | undefined> {
    const sessions = resolve<SessionService>(this.#container, "paymentSessionService");
    try {
      const session = await sessions.retrieve(sessionId, { select: ["id", "provider_id", "data"] });
      return isPurchaseAuthProviderId(session.provider_id) ? readData(session.data ?? undefined) : undefined;
    } catch (error) {
      if (MedusaError.isMedusaError(error) && (error as MedusaError).type === MedusaError.Types.NOT_FOUND) {
        return undefined;
      }
      throw error;
    }
  }

  /**
   * Merges what a webhook taught us into a payment session's data. Returns false when the session
   * does not exist or is not this provider's. States only move forward.
   */
  async mergeSessionData(sessionId: string, update: Partial<PurchaseAuthData>): Promise<boolean> {
    const sessions = resolve<SessionService>(this.#container, "paymentSessionService");
    let session: SessionRecord;
    try {
      session = await sessions.retrieve(sessionId, { select: ["id", "provider_id", "data"] });
    } catch (error) {
      // Only "no such session" means the event is not ours; any other failure (the database down)
      // must throw, so Medusa retries the webhook instead of dropping it.
      if (MedusaError.isMedusaError(error) && (error as MedusaError).type === MedusaError.Types.NOT_FOUND) {
        return false;
      }
      throw error;
    }
    if (!isPurchaseAuthProviderId(session.provider_id)) return false;
    const current = readData(session.data ?? undefined);
    const merged: PurchaseAuthData = {
      ...current,
      ...update,
      // A late event never moves the state back, nor forgets an order id.
      state: update.state ? laterState(current.state, update.state) : current.state,
      order_id: current.order_id ?? update.order_id ?? null,
    };
    await sessions.update({ id: session.id, data: { ...(session.data ?? {}), ...writeData(merged) } });
    return true;
  }
}
