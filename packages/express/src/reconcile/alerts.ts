import type { Logger } from "@purchase-auth/core";

/**
 * Something an operator must look at: money may be held or taken that the shop's records do not
 * explain. Raised at most once per cause and charge by the code that finds it.
 */
export interface PaymentAlert {
  /**
   * needs_review: an attempt's outcome stayed unknown past the idempotency window, or the service
   * accepted it and no webhook told its outcome long after its last scheduled attempt (the
   * charge's `reason` says which: OUTCOME_UNKNOWN_PAST_IDEMPOTENCY_WINDOW or OUTCOME_OVERDUE);
   * unexpected_authorization: the service reports an authorization for a reference whose charge
   * knows another one (or failed); it may hold money nobody will capture or release.
   */
  kind: "needs_review" | "unexpected_authorization";
  /** The app's order reference. */
  reference: string;
  authorizationId?: string;
  orderId?: string;
  /** What happened and what to do, in words for an operator. */
  message: string;
}

export type AlertHandler = (alert: PaymentAlert) => void | Promise<void>;

/** Logs every alert at error level, then hands it to the app's hook; a failing hook is logged, never thrown. */
export function alerter(
  logger: Logger,
  onAlert: AlertHandler | undefined,
): (alert: PaymentAlert) => Promise<void> {
  return async (alert) => {
    logger.error?.(`purchase-auth: ALERT ${alert.kind}: ${alert.message}`, {
      reference: alert.reference,
      ...(alert.authorizationId === undefined ? {} : { authorizationId: alert.authorizationId }),
      ...(alert.orderId === undefined ? {} : { orderId: alert.orderId }),
    });
    try {
      await onAlert?.(alert);
    } catch (error) {
      logger.error?.("purchase-auth: the onAlert hook failed", { error: String(error) });
    }
  };
}
