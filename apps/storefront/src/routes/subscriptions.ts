import type { ChargeStatus } from "@purchase-auth/express";
import { Router as createRouter, type Request, type Response, type Router } from "express";
import { PageError } from "../http/errors.js";
import { pageContext } from "../http/page-context.js";
import { sessionOf } from "../http/sessions.js";
import { type DemoCustomer, findCustomer } from "../shop/customers.js";
import { CANCELLED_BY_CUSTOMER } from "../shop/subscriptions.js";
import type { ShopContext } from "../shop-context.js";
import { periodDueAt } from "../subscriptions/calendar.js";
import { formatDateTime } from "../views/format.js";
import { renderSubscriptions } from "../views/subscriptions.js";

/** A paid order (its money was authorized or taken) may be re-ordered every month. */
export const REORDERABLE: ReadonlySet<ChargeStatus> = new Set<ChargeStatus>([
  "authorized",
  "partially_captured",
  "captured",
]);

/** "Re-order this every month" and the customer's subscriptions page. */
export function subscriptionRoutes(shop: ShopContext): Router {
  const router = createRouter();

  router.post("/orders/:reference/subscribe", async (req, res) => {
    const customer = signedIn(req, res);
    if (!customer) return;
    const order = shop.orders.get(String(req.params.reference));
    const charge = order && (await shop.charges.findByReference(order.reference));
    if (!order || !charge || order.customerId !== customer.id) {
      throw new PageError(404, "Order not found", "We could not find that order in your account.");
    }
    if (!REORDERABLE.has(charge.status) || order.subscriptionId !== undefined) {
      // Only a paid order starts a subscription; a renewal order already belongs to one.
      res.redirect(303, `/orders/${encodeURIComponent(order.reference)}`);
      return;
    }
    const startedAt = new Date(shop.now());
    const { subscription, created } = shop.subscriptions.start({
      customerId: customer.id,
      sourceReference: order.reference,
      lines: order.lines,
      total: order.total,
      currency: order.currency,
      startedAt,
      firstRenewalAt: periodDueAt(startedAt, 1),
    });
    sessionOf(req).flash = created
      ? {
          tone: "success",
          text: `We will re-order this every month. The first renewal is on ${formatDateTime(subscription.nextRenewalAt)}.`,
        }
      : { tone: "info", text: "You already re-order this every month." };
    res.redirect(303, "/subscriptions");
  });

  router.get("/subscriptions", async (req, res) => {
    const customer = signedIn(req, res);
    if (!customer) return;
    const page = renderSubscriptions(await pageContext(req, shop), {
      subscriptions: shop.subscriptions.forCustomer(customer.id).reverse(),
      now: new Date(shop.now()),
      demoClock: shop.demoClock !== undefined,
    });
    res.type("html").send(page);
  });

  router.post("/subscriptions/:id/cancel", (req, res) => {
    const customer = signedIn(req, res);
    if (!customer) return;
    const subscription = shop.subscriptions.get(String(req.params.id));
    if (!subscription || subscription.customerId !== customer.id) {
      throw new PageError(404, "Subscription not found", "We could not find that subscription.");
    }
    if (subscription.status === "active") {
      shop.subscriptions.stop(subscription, CANCELLED_BY_CUSTOMER, new Date(shop.now()));
      sessionOf(req).flash = { tone: "success", text: "Stopped: nothing more will be re-ordered." };
    }
    res.redirect(303, "/subscriptions");
  });

  return router;
}

function signedIn(req: Request, res: Response): DemoCustomer | undefined {
  const customer = findCustomer(sessionOf(req).customerId);
  if (!customer) {
    const returnTo = req.method === "GET" ? req.originalUrl : "/subscriptions";
    res.redirect(303, `/sign-in?returnTo=${encodeURIComponent(returnTo)}`);
  }
  return customer;
}
