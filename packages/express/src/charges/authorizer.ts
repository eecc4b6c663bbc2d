import {
  type AuthorizationRequest,
  type CreateAuthorizationResult,
  DeclinedError,
  IdempotencyError,
  InvalidRequestError,
  idempotencyKeyIn,
  NotFoundError,
  PurchaseAuthClient,
  type WriteOptions,
} from "@purchase-auth/core";
import { withTimeout } from "../http/timeout.js";
import type { ResolvedOptions } from "../options.js";
import type { PaymentAlert } from "../reconcile/alerts.js";
import type { ChargeRecord, PendingAuthorization } from "../stores/types.js";
import type { Charges } from "./charges.js";
import { authorizationsPathOf, stillConfirming, wasNotDelivered } from "./create-sends.js";
import { InFlight } from "./in-flight.js";
import { isoString } from "./iso-time.js";
import { mayHaveReachedBefore } from "./operation-log.js";
import type { ChargeNews } from "./state-machine.js";

// Sends the create call of a charge's current attempt, for the charge route and the reconciler
// alike: exactly the request recorded before the first send, with exactly its key, and never once
// the service's idempotency window has passed (it forgets keys; a resend could charge twice).

export interface AuthorizerDeps {
  options: ResolvedOptions;
  charges: Charges;
  alert: (alert: PaymentAlert) => Promise<void>;
}

/** Why a charge's attempt was given up to review: its `reason`, and what the alert tells an operator. */
const REVIEWS = {
  /** Its create call's outcome stayed unknown past the service's idempotency window. */
  idempotency_window: {
    reason: "OUTCOME_UNKNOWN_PAST_IDEMPOTENCY_WINDOW",
    message:
      "the outcome of this charge's create call stayed unknown past the service's idempotency window, so its key is never sent again; look the order reference up at the service, then capture, cancel or refund by hand",
  },
  /** Accepted (202), and no webhook told its outcome long after its last scheduled attempt. */
  outcome_overdue: {
    reason: "OUTCOME_OVERDUE",
    message:
      "the service accepted this charge's authorization, but no webhook told its outcome long after its last scheduled attempt (deliveries may have been lost); look the authorization up at the service, then capture, cancel or refund by hand. A webhook that still arrives moves the charge on",
  },
} as const;

export type ReviewCause = keyof typeof REVIEWS;

export class Authorizer {
  readonly #deps: AuthorizerDeps;
  /** Create calls in flight in this process, per reference and attempt: a double click shares one. */
  readonly #inFlight = new InFlight<ChargeRecord>();
  /** Errors `send` threw after this call itself gave the charge up to review (the key's window passed). */
  readonly #movedToReview = new WeakSet<object>();

  constructor(deps: AuthorizerDeps) {
    this.#deps = deps;
  }

  /**
   * The write-ahead record of an attempt: its key binds the order reference to the customer token
   * and the attempt, so a reference another customer reuses (a cart id after a restart) can never
   * replay someone else's authorization.
   */
  pendingFor(request: AuthorizationRequest, reference: string, attempt: number): PendingAuthorization {
    const idempotencyKey = idempotencyKeyIn(
      this.#deps.options.idempotencyNamespace,
      reference,
      request.customerToken.toLowerCase(),
      "authorize",
      attempt,
    );
    // Its first send is counted here, in the stored change made before it goes out.
    return { idempotencyKey, request, firstSentAt: isoString(this.#deps.options.now()), sends: 1 };
  }

  /** True while the attempt's key may still be sent: inside the window the service keeps it. */
  canResend(pending: PendingAuthorization): boolean {
    const age = this.#deps.options.now() - Date.parse(pending.firstSentAt);
    return age < this.#deps.options.resendWindowMs;
  }

  /** True when `send` threw `error` after it gave the charge up to review itself (it alerted). */
  movedToReview(error: unknown): boolean {
    return typeof error === "object" && error !== null && this.#movedToReview.has(error);
  }

  /** True while this process is sending the charge's current attempt (its request will record the outcome). */
  isSending(charge: ChargeRecord): boolean {
    return this.#inFlight.has(slotOf(charge));
  }

  /**
   * Sends the charge's current attempt once per process (other instances meet at the key) and
   * returns the charge as stored afterwards. Only a pending attempt without an authorization id is
   * sent; any other charge comes back as it is. A key past its window is not sent: the charge moves
   * to `needs_review` and an alert is raised. Throws the client's error when the outcome is not
   * definite (the charge stays pending for the same key) or when it was refused (recorded first).
   * `sending`: "first" only from the request that created the attempt (its record counted this
   * send); otherwise the send is counted on the record first, by compare-and-set on the same
   * unanswered attempt (not sent when someone else answered it meanwhile). Core is told when the
   * key was first sent only when an earlier send may have reached the service. A send that did
   * nothing is counted too; when no counted send may have reached the service, the same change
   * fails the charge (SERVICE_UNAVAILABLE) and core's error is thrown ("nothing was charged" is
   * then true); while one may have, the charge stays pending and an OutcomeUnknownError is thrown.
   */
  send(
    charge: ChargeRecord,
    request?: AuthorizationRequest,
    sending: "first" | "resend" = "resend",
  ): Promise<ChargeRecord> {
    return this.#inFlight.join(slotOf(charge), () => this.#send(charge, request, sending));
  }

  async #send(
    given: ChargeRecord,
    rebuilt: AuthorizationRequest | undefined,
    sending: "first" | "resend",
  ): Promise<ChargeRecord> {
    const { options, charges } = this.#deps;
    let charge = given;
    // Only an attempt whose authorization is not known is ever sent: a charge past pending has
    // dropped its write-ahead record, and a key derived again could be one the service never saw.
    if (charge.status !== "pending" || charge.authorizationId !== undefined) return charge;
    const pending = charge.pendingAuthorization ?? legacyPending(charge, rebuilt, options);
    if (pending === undefined || !this.canResend(pending)) return (await this.markNeedsReview(charge)).charge;
    const recorded = charge.pendingAuthorization !== undefined;
    if (recorded && sending === "resend") {
      // Counted before it goes out: until core reports it, nobody can decide that no send reached.
      const counted = await charges.applyTo(charge, { kind: "create_sending", attempt: charge.attempt });
      const current = counted.charge;
      if (current === undefined || !isSameUnansweredAttempt(current, charge)) return current ?? charge;
      charge = current;
    }
    const sent = charge.pendingAuthorization ?? pending;
    // Core is told the key may have been sent before only when it may have: told so, it can never
    // report a send that never left as "not sent". (A record of an earlier release: it may have.)
    const earlier = recorded ? mayHaveReachedBefore(sent) : true;
    try {
      const result = await this.#create(sent, earlier);
      const news: ChargeNews =
        result.synchronous && result.orderId !== undefined
          ? {
              kind: "authorized",
              authorizationId: result.authorizationId,
              orderId: result.orderId,
              // Specification 4.1 rule 4: with Auto, the order is captured right after authorization.
              // The attempt's first request decided the mode: a resent key replays its answer.
              captured: charge.captureMode === "Auto",
              attempt: charge.attempt,
            }
          : { kind: "accepted", authorizationId: result.authorizationId, attempt: charge.attempt };
      return (await charges.applyTo(charge, news)).charge ?? charge;
    } catch (error) {
      // The service (or core, by its own clock) says the key is past its window: unknowable now.
      if (isPastIdempotencyWindow(error)) {
        // The service's word on this key, whatever our clock says: only the attempt must be the same.
        const { moved } = await this.markNeedsReview(charge, "idempotency_window", (current) =>
          isSameUnansweredAttempt(current, charge),
        );
        if (moved && typeof error === "object" && error !== null) this.#movedToReview.add(error);
        throw error;
      }
      const reason = definiteFailureReason(error);
      // A definite answer ends this attempt; an unknown outcome leaves it pending for the same key.
      // Tagged with its attempt: a late answer for an earlier attempt never fails a later one.
      if (reason !== undefined) {
        await charges.apply(charge.reference, { kind: "failed", reason, attempt: charge.attempt });
      } else if (recorded && wasNotDelivered(error)) {
        return this.#notDelivered(charge, sent, error);
      }
      throw error;
    }
  }

  /**
   * Counts a send that did nothing. When no counted send may have reached the service, that change
   * failed the charge: core's error ("nothing was charged") is true and is thrown. While one may
   * have (another instance's, the reconciler's, not reported yet or reported unknown), the charge
   * stays pending for the same key: "confirming". Anything else (the charge learnt its answer
   * meanwhile) is answered with the charge as stored.
   */
  async #notDelivered(
    charge: ChargeRecord,
    sent: PendingAuthorization,
    error: unknown,
  ): Promise<ChargeRecord> {
    const news = { kind: "create_not_delivered", attempt: charge.attempt } as const;
    const current = (await this.#deps.charges.apply(charge.reference, news)) ?? charge;
    if (current.attempt === charge.attempt && current.status === "failed") throw error;
    if (isSameUnansweredAttempt(current, charge)) {
      const path = authorizationsPathOf(this.#deps.options.client);
      throw stillConfirming(current.pendingAuthorization ?? sent, error, path);
    }
    return current;
  }

  /**
   * The create call, bounded by the router's `timeoutMs`: as the call's own deadline for our core
   * (no signal or timer per charge), with an abort signal for a client from another copy of core
   * (an app's own dependency, perhaps a release that ignores `deadlineMs`).
   */
  #create(pending: PendingAuthorization, sentBefore: boolean): Promise<CreateAuthorizationResult> {
    // Typed as ours, but `options.ts` also accepts a client from another copy of core.
    const client: Pick<PurchaseAuthClient, "authorizations"> = this.#deps.options.client;
    const { timeoutMs, now } = this.#deps.options;
    const { request, idempotencyKey } = pending;
    // A key that may have been sent before may have taken effect: told so, core can only answer
    // done, refused by the service about that key, or unknown (never "not sent"). Not later than
    // now, so a clock that differs from the client's cannot make it look like the future.
    const firstSentAt = sentBefore ? new Date(Math.min(Date.parse(pending.firstSentAt), now())) : undefined;
    if (client instanceof PurchaseAuthClient) {
      const options: WriteOptions = { idempotencyKey, deadlineMs: timeoutMs };
      if (firstSentAt !== undefined) options.firstSentAt = firstSentAt;
      return client.authorizations.create(request, options);
    }
    return withTimeout(timeoutMs, (signal) => {
      const options: WriteOptions = { idempotencyKey, signal };
      if (firstSentAt !== undefined) options.firstSentAt = firstSentAt;
      return client.authorizations.create(request, options);
    });
  }

  /**
   * Gives a pending attempt whose outcome we cannot learn by ourselves up to review, and says so.
   * `stillDue` is checked on the charge as stored; by default, for `idempotency_window`, the attempt
   * is still the same one, still without an answer, and its key still past the window (a request
   * may have resent it meanwhile, and learnt its answer). `moved` is true for the one call (of any
   * instance) that moved it, which raised the alert.
   */
  async markNeedsReview(
    charge: ChargeRecord,
    cause: ReviewCause = "idempotency_window",
    stillDue: (current: ChargeRecord) => boolean = (current) =>
      isSameUnansweredAttempt(current, charge) &&
      (current.pendingAuthorization === undefined || !this.canResend(current.pendingAuthorization)),
  ): Promise<{ charge: ChargeRecord; moved: boolean }> {
    const { reason, message } = REVIEWS[cause];
    const { charge: updated, moved } = await this.#deps.charges.moveToReview(
      charge.reference,
      reason,
      stillDue,
    );
    if (moved && updated !== undefined) {
      await this.#deps.alert({
        kind: "needs_review",
        reference: charge.reference,
        ...(updated.authorizationId === undefined ? {} : { authorizationId: updated.authorizationId }),
        message,
      });
    }
    return { charge: updated ?? charge, moved };
  }
}

/** The same attempt as `charge`, still pending and still without an authorization. */
export function isSameUnansweredAttempt(current: ChargeRecord, charge: ChargeRecord): boolean {
  return (
    current.status === "pending" &&
    current.attempt === charge.attempt &&
    current.authorizationId === undefined
  );
}

/**
 * A charge stored before write-ahead records existed: its key was derived from the reference and
 * the attempt alone, and its creation is the earliest it can have been sent. Undefined when the
 * request is not known (the reconciler cannot rebuild it).
 */
function legacyPending(
  charge: ChargeRecord,
  request: AuthorizationRequest | undefined,
  options: ResolvedOptions,
): PendingAuthorization | undefined {
  if (request === undefined) return undefined;
  const idempotencyKey = idempotencyKeyIn(
    options.idempotencyNamespace,
    charge.reference,
    "authorize",
    charge.attempt,
  );
  return { idempotencyKey, request, firstSentAt: charge.createdAt };
}

/** The service (IDEMPOTENCY_RESPONSE_EXPIRED), or core by its own clock, says a key is past its window. */
export function isPastIdempotencyWindow(error: unknown): boolean {
  if (IdempotencyError.isInstance(error) && error.reason === "IDEMPOTENCY_RESPONSE_EXPIRED") return true;
  return (error as { name?: unknown } | null)?.name === "IdempotencyWindowPassedError";
}

/**
 * The reason to store when the service gave a definite answer that nothing was charged; undefined
 * when nobody knows (timeouts, 5xx, unexpected answers): those keep the charge pending.
 */
function definiteFailureReason(error: unknown): string | undefined {
  if (DeclinedError.isInstance(error)) return error.reason ?? "PAYMENT_DENIED";
  if (NotFoundError.isInstance(error)) return "CUSTOMER_TOKEN_NOT_FOUND";
  if (InvalidRequestError.isInstance(error)) return "INVALID_REQUEST";
  if (IdempotencyError.isInstance(error) && error.reason === "IDEMPOTENCY_KEY_PARSING") return error.reason;
  return undefined;
}

/** The in-process key of a charge's current attempt. */
function slotOf(charge: ChargeRecord): string {
  return `${charge.reference}\u0000${charge.attempt}`;
}
