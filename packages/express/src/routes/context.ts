import type { Authorizer } from "../charges/authorizer.js";
import type { Charges } from "../charges/charges.js";
import type { MerchantWrites } from "../charges/merchant-writes.js";
import type { ChargeNotifier } from "../charges/notifier.js";
import type { ResolvedOptions } from "../options.js";
import type { PaymentAlert } from "../reconcile/alerts.js";
import type { StreamQuota } from "./stream-quota.js";

/** What every route of one router shares. */
export interface RouteContext {
  options: ResolvedOptions;
  charges: Charges;
  /** Sends a charge's create call by its write-ahead record: the charge route's and the reconciler's. */
  authorizer: Authorizer;
  /** Sends a merchant write by its log entry: the merchant routes' and the reconciler's. */
  writes: MerchantWrites;
  notifier: ChargeNotifier;
  /** Logs an alert at error level and hands it to the app's `onAlert`. */
  alert: (alert: PaymentAlert) => Promise<void>;
  /** Closers of the open live-update streams, so `router.close()` can end them. */
  streams: Set<() => void>;
  /** Caps the open live-update streams per customer and in all. */
  streamQuota: StreamQuota;
}
