import type { PurchaseAuthClient } from "@purchase-auth/core";
import type { ResolvedCustomer } from "./options.js";
import type { ChargeStore } from "./stores/types.js";

/** What the router puts on `req.purchaseAuth` for the requests it handles. */
export interface PurchaseAuthRequestContext {
  /** The client the router charges with. */
  client: PurchaseAuthClient;
  /** The router's charge store. */
  store: ChargeStore;
  /** The customer `resolveCustomer` found, once a customer route resolved one. */
  customer?: ResolvedCustomer;
}

// Declaration merging, as express-rate-limit and helmet do: `req.purchaseAuth` is typed wherever
// this package is imported.
declare global {
  namespace Express {
    interface Request {
      /** Set by `@purchase-auth/express` on the requests its router handles. */
      purchaseAuth?: PurchaseAuthRequestContext;
    }
  }
}
