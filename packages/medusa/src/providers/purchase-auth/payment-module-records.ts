import { MedusaError } from "@medusajs/framework/utils";
import { orderLockName, withAdvisoryLock } from "./advisory-lock";
import { isPurchaseAuthProviderId } from "./provider-ids";
import { type PurchaseAuthData, readData } from "./session-data";
import {
  claimResend,
  confirmClaimLocked,
  heldByNobody,
  type Knex,
  livePaymentOfSession,
  mergeLocked,
  paidOtherwise,
  type ResendClaim,
  type ResendClaimant,
  ResendClaimedError,
  releaseClaim,
  replaceSessionDataIfUnchanged,
  sessionRowAnyState,
  strandedCheckoutData,
} from "./session-sql";

/** How long a merge waits for the reconcile job to finish resending a session, and how often it looks. */
const MERGE_WAIT_MS = 20_000;
const MERGE_POLL_MS = 250;

// Two facts Medusa does not pass to a provider live in the payment module's own records, which the
// provider reaches through the module's container (its cradle):
// - capturePayment gets no amount; the capture Medusa just committed carries it, and its id is the
//   call's idempotency key. Reading it is how a partial capture captures the right amount.
// - a webhook's outcome (the order id of an authorization answered 202) must reach the session's
//   data before Medusa's payment workflow authorizes the session, since that workflow hands the
//   provider the stored data only.
// Writes to a session's data go through PostgreSQL directly (session-sql.ts), guarded, so that
// concurrent writers cannot undo one another. Both use the payment module's internal services; the peer range pins the Medusa versions they
// were tested with.

/** The captures (or refunds) Medusa recorded for one payment, and that payment. */
export interface RecordedAmounts {
  paymentId: string | undefined;
  amounts: unknown[];
  /** The amount of the capture (refund) asked about: the call's own. */
  own: unknown;
  /** Who recorded it (`created_by`: a user's id, or the plugin's mark for a followed write). */
  ownBy: string | undefined;
}

/**
 * Who recorded a capture or refund the plugin records itself, following the service (`created_by`
 * of the row; see workflows/order-transactions.ts).
 */
export const RECORDED_BY_PLUGIN = "purchase-auth";

/**
 * The key of the payment's metadata holding a write of unknown outcome of kind `kind` (see
 * unknown-writes.ts): one a kind, so a refund's never takes the place of a capture's still unsettled.
 */
function unknownWriteKey(kind: UnknownWriteKind): string {
  return `purchase_auth_unknown_${kind}`;
}

/** The kinds of order writes whose unknown outcome is kept. */
export type UnknownWriteKind = "capture" | "refund" | "cancel";

interface AmountRecord {
  id: string;
  created_by?: string | null;
  amount?: unknown;
  raw_amount?: unknown;
  payment_id?: string;
}

interface SessionRecord {
  id: string;
  provider_id: string;
  data: Record<string, unknown> | null;
}

/** The payment module's capture and refund services. */
interface AmountService {
  retrieve(id: string, config?: { select?: string[] }): Promise<AmountRecord>;
  list(filters: { payment_id: string }, config?: { select?: string[] }): Promise<AmountRecord[]>;
}

interface SessionService {
  retrieve(id: string, config?: { select?: string[] }): Promise<SessionRecord>;
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

  /**
   * The captures Medusa recorded for the payment of capture `captureId`, that one included (it is
   * committed before the provider is called). Their sum, rounded once, is the captured total to aim
   * at: rounding each capture separately can aim a cent above the order's total.
   */
  async capturesOfPaymentOf(captureId: string): Promise<RecordedAmounts> {
    return await this.#amountsOfPaymentOf("captureService", captureId);
  }

  /** The refunds Medusa recorded for the payment of refund `refundId`, that one included (see above). */
  async refundsOfPaymentOf(refundId: string): Promise<RecordedAmounts> {
    return await this.#amountsOfPaymentOf("refundService", refundId);
  }

  /** The `kind` write of unknown outcome kept on payment `paymentId` (see unknown-writes.ts), if any. */
  async unknownWriteOf(paymentId: string, kind: UnknownWriteKind): Promise<unknown> {
    const { rows } = await this.#pg().raw(`select metadata->? as write from payment where id = ?`, [
      unknownWriteKey(kind),
      paymentId,
    ]);
    return (rows[0] as { write?: unknown } | undefined)?.write ?? undefined;
  }

  /** Keeps `write` (of `kind`) on payment `paymentId`, in place of one of its kind kept before. */
  async keepUnknownWrite(paymentId: string, kind: UnknownWriteKind, write: object): Promise<void> {
    await this.#pg().raw(
      `update payment set metadata = coalesce(metadata, '{}'::jsonb) || jsonb_build_object(?::text, ?::jsonb)
       where id = ?`,
      [unknownWriteKey(kind), JSON.stringify(write), paymentId],
    );
  }

  /** Removes the kept `kind` write once settled, unless another has taken its place meanwhile. */
  async forgetUnknownWrite(paymentId: string, kind: UnknownWriteKind, write: unknown): Promise<void> {
    await this.#pg().raw(
      `update payment set metadata = metadata - ?::text where id = ? and metadata->? = ?::jsonb`,
      [unknownWriteKey(kind), paymentId, unknownWriteKey(kind), JSON.stringify(write)],
    );
  }

  /**
   * Runs `work` holding the lock of the service's order `orderId`: the provider's captures and
   * refunds of one order read Medusa's records and the service, then send the difference, one at a
   * time (Medusa calls them outside any lock, two at once would both send it).
   */
  async withOrderLock<T>(orderId: string, work: () => Promise<T>): Promise<T> {
    return await withAdvisoryLock(this.#pg(), orderLockName(orderId), work);
  }

  async #amountsOfPaymentOf(
    service: "captureService" | "refundService",
    id: string,
  ): Promise<RecordedAmounts> {
    const records = resolve<AmountService>(this.#container, service);
    const record = await records.retrieve(id, {
      select: ["id", "payment_id", "amount", "raw_amount", "created_by"],
    });
    const own = record.raw_amount ?? record.amount;
    const ownBy = record.created_by ?? undefined;
    if (!record.payment_id) return { paymentId: undefined, amounts: [own], own, ownBy };
    const all = await records.list(
      { payment_id: record.payment_id },
      { select: ["id", "amount", "raw_amount"] },
    );
    return {
      paymentId: record.payment_id,
      amounts: all.map((entry) => entry.raw_amount ?? entry.amount),
      own,
      ownBy,
    };
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
   * Merges what a webhook (or a declined attempt) taught us into a payment session's data, with the
   * row locked from read to write (session-sql.ts): states only move forward, whatever was written
   * meanwhile. Returns the data written, undefined when the session does not exist or is not this
   * provider's. A state change while the reconcile job resends the session's key waits for the job
   * to write (seconds), then merges into what it wrote; after MERGE_WAIT_MS it throws
   * ResendClaimedError (Medusa's event bus may deliver the webhook again).
   */
  async mergeSessionData(
    sessionId: string,
    update: Partial<PurchaseAuthData>,
  ): Promise<PurchaseAuthData | undefined> {
    for (let waited = 0; ; waited += MERGE_POLL_MS) {
      try {
        return await mergeLocked(this.#pg(), sessionId, isPurchaseAuthProviderId, update);
      } catch (error) {
        if (!(error instanceof ResendClaimedError) || waited >= MERGE_WAIT_MS) throw error;
      }
      await new Promise((done) => setTimeout(done, MERGE_POLL_MS));
    }
  }

  /** Claims the resend of an unknown attempt's key (see claimResend); undefined when it cannot be had. */
  async claimResend(
    sessionId: string,
    attempt: number,
    by: ResendClaimant,
  ): Promise<ResendClaim | undefined> {
    const claimed = await claimResend(this.#pg(), sessionId, attempt, by);
    if (!claimed) return undefined;
    return { at: String(claimed.resend_claimed_at), by };
  }

  /** Whether a checkout's claim is still its own after the resend (see confirmClaimLocked). */
  async confirmClaim(
    sessionId: string,
    claim: ResendClaim,
  ): Promise<{ data: PurchaseAuthData; held: boolean } | undefined> {
    return await confirmClaimLocked(this.#pg(), sessionId, claim);
  }

  /**
   * Gives back a checkout's claim with `alongside` written, only while the claim is still its own
   * (see releaseClaim); false when someone took it over, and then nothing is written.
   */
  async giveClaimBack(
    sessionId: string,
    claim: ResendClaim,
    alongside: Partial<PurchaseAuthData>,
  ): Promise<boolean> {
    return await releaseClaim(this.#pg(), sessionId, claim, alongside);
  }

  /**
   * Writes `data` only while the session's data still is `read` and nobody holds a live resend claim
   * on it (see replaceSessionDataIfUnchanged with `unclaimedAt`).
   */
  async replaceDataIfUnchangedAndUnclaimed(
    sessionId: string,
    read: Record<string, unknown> | null,
    data: Record<string, unknown>,
  ): Promise<boolean> {
    return await replaceSessionDataIfUnchanged(this.#pg(), sessionId, read, data, new Date());
  }

  /** Whether the session's row is gone or deleted (see sessionRowAnyState). */
  async sessionDeleted(sessionId: string): Promise<boolean> {
    const row = await sessionRowAnyState(this.#pg(), sessionId);
    return !row || row.deleted;
  }

  /**
   * True when another session's payment that still holds money paid the session's payment
   * collection, and the session has no live payment of its own (see paidOtherwise).
   */
  async paidOtherwise(sessionId: string): Promise<boolean> {
    return await paidOtherwise(this.#pg(), sessionId);
  }

  /** True when no Medusa session or payment holds this authorization's order (see heldByNobody). */
  async heldByNobody(sessionId: string, authorizationId: string, orderId: string): Promise<boolean> {
    return await heldByNobody(this.#pg(), sessionId, authorizationId, orderId);
  }

  /** The live payment Medusa recorded for the session, if any (see livePaymentOfSession). */
  async livePaymentOfSession(sessionId: string): Promise<{ id: string; orderId: string | null } | undefined> {
    return await livePaymentOfSession(this.#pg(), sessionId);
  }

  /** The data of a checkout's session no cart can complete on (see strandedCheckoutData). */
  async strandedCheckoutData(sessionId: string): Promise<Record<string, unknown> | undefined> {
    return await strandedCheckoutData(this.#pg(), sessionId);
  }

  #pg(): Knex {
    return resolve<Knex>(this.#container, "__pg_connection__");
  }
}
