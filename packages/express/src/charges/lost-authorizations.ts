import type { PaymentAlert } from "../reconcile/alerts.js";
import type { ChargeRecord } from "../stores/types.js";
import {
  type ChargeNews,
  chargeStatusOfOrder,
  isAboutAnotherAttempt,
  isAnotherAuthorization,
} from "./state-machine.js";

// The alert for money the service may hold that no charge of ours will capture or release.

/**
 * News that an authorization succeeded, for a charge marked failed, about an earlier attempt, or
 * about an authorization other than the one the charge holds: money may be held that nobody will
 * capture or release. Never applied (a failed charge stays failed, and news of another
 * authorization never reaches the current attempt or a later one), but an operator must look.
 * Decided on the record being changed, so a concurrent writer cannot make it miss one.
 */
export function lostAuthorizationAlert(charge: ChargeRecord, news: ChargeNews): PaymentAlert | undefined {
  const succeeded =
    news.kind === "authorized" ||
    (news.kind === "order" && !["cancelled", "expired"].includes(chargeStatusOfOrder(news.orderStatus)));
  if (!succeeded) return undefined;
  const unexpected =
    charge.status === "failed" || isAnotherAuthorization(charge, news) || isAboutAnotherAttempt(charge, news);
  if (!unexpected) return undefined;
  const held = charge.authorizationId;
  return {
    kind: "unexpected_authorization",
    reference: charge.reference,
    authorizationId: news.authorizationId,
    orderId: news.orderId,
    message: `an authorization succeeded that this charge does not hold (it is marked ${charge.status}, attempt ${charge.attempt}${held === undefined ? "" : `, with authorization ${held}`}); check its order at the service and cancel it if it is not wanted`,
  };
}

/** One alert per authorization: its authorization.succeeded and a folded order event say the same. */
export function uniqueByAuthorization(alerts: readonly PaymentAlert[]): PaymentAlert[] {
  const seen = new Set<string | undefined>();
  return alerts.filter((alert) => {
    const id = alert.authorizationId?.toLowerCase();
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
