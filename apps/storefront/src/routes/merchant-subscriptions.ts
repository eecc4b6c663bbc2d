import { summaryOf } from "@purchase-auth/batch";
import { Router as createRouter, type Router } from "express";
import { pageContext } from "../http/page-context.js";
import { sessionOf } from "../http/sessions.js";
import type { ShopContext } from "../shop-context.js";
import { RENEWAL_BATCH_ID } from "../subscriptions/renewal-order.js";
import { renderMerchantSubscriptions } from "../views/merchant-subscriptions.js";

/** The back office's view of "re-order every month": renewals, declines by reason, stopped subscriptions. */
export function merchantSubscriptionRoutes(shop: ShopContext): Router {
  const router = createRouter();
  router.get("/merchant/subscriptions", async (req, res) => {
    if (!sessionOf(req).merchant) {
      res.redirect(303, "/merchant/sign-in");
      return;
    }
    // The batch package's own summary of the renewal batch: its counts come from the stored outcomes.
    const summary = summaryOf(RENEWAL_BATCH_ID, await shop.renewals.store.counts(RENEWAL_BATCH_ID));
    const page = renderMerchantSubscriptions(await pageContext(req, shop), {
      subscriptions: shop.subscriptions.all().reverse(),
      summary,
      now: new Date(shop.now()),
      demoClock: shop.demoClock !== undefined,
    });
    res.type("html").send(page);
  });
  return router;
}
