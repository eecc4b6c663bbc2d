import { timingSafeEqual } from "node:crypto";
import type { Order } from "@purchase-auth/core";
import type { MerchantOperation } from "@purchase-auth/express";
import { Router as createRouter, type Request, type Response, type Router } from "express";
import { PageError } from "../http/errors.js";
import { pageContext } from "../http/page-context.js";
import { renewSession, sessionOf } from "../http/sessions.js";
import { findCustomer } from "../shop/customers.js";
import type { ShopContext } from "../shop-context.js";
import { renderMerchantOrder } from "../views/merchant-order.js";
import { type MerchantOrderRow, renderMerchantOrders } from "../views/merchant-orders.js";
import { renderMerchantSignIn } from "../views/merchant-sign-in.js";
import { formField } from "./shop.js";

/**
 * The demo merchant. Public on purpose: the page shows it. The session flag it sets is what
 * payments.ts's authorizeMerchant checks before the middleware captures, cancels or refunds.
 */
export const DEMO_MERCHANT = { username: "merchant", password: "demo" } as const;

const OPERATIONS: ReadonlySet<string> = new Set<MerchantOperation>(["capture", "cancel", "refund"]);

/** The back office: the order list, and one order with capture, cancel and refund. */
export function merchantRoutes(shop: ShopContext): Router {
  const router = createRouter();

  router.get("/merchant/sign-in", async (req, res) => {
    res.type("html").send(renderMerchantSignIn(await pageContext(req, shop), DEMO_MERCHANT, false));
  });

  router.post("/merchant/sign-in", async (req, res) => {
    const matches =
      sameText(formField(req.body, "username"), DEMO_MERCHANT.username) &&
      sameText(formField(req.body, "password"), DEMO_MERCHANT.password);
    if (!matches) {
      res
        .status(401)
        .type("html")
        .send(renderMerchantSignIn(await pageContext(req, shop), DEMO_MERCHANT, true));
      return;
    }
    renewSession(req, res, shop.sessions).merchant = true;
    res.redirect(303, "/merchant");
  });

  router.post("/merchant/sign-out", (req, res) => {
    renewSession(req, res, shop.sessions).merchant = false;
    res.redirect(303, "/merchant/sign-in");
  });

  router.get("/merchant", async (req, res) => {
    if (!requireMerchant(req, res)) return;
    const rows: MerchantOrderRow[] = [];
    for (const order of shop.orders.all()) {
      const charge = await shop.charges.findByReference(order.reference);
      if (charge) rows.push({ order, charge, customer: findCustomer(order.customerId) });
    }
    res.type("html").send(renderMerchantOrders(await pageContext(req, shop), rows));
  });

  router.get("/merchant/orders/:reference", async (req, res) => {
    if (!requireMerchant(req, res)) return;
    const order = shop.orders.get(String(req.params.reference));
    const charge = order && (await shop.charges.findByReference(order.reference));
    if (!order || !charge)
      throw new PageError(404, "Order not found", "There is no order with that reference.");
    const operation =
      typeof req.query.done === "string" && OPERATIONS.has(req.query.done) ? req.query.done : undefined;
    const outcome = req.query.outcome === "already_done" ? "already_done" : "done";
    const page = renderMerchantOrder(await pageContext(req, shop), {
      order,
      charge,
      customer: findCustomer(order.customerId),
      serviceOrder: charge.orderId ? await readServiceOrder(shop, charge.orderId) : undefined,
      ...(operation ? { done: { operation: operation as MerchantOperation, outcome } } : {}),
    });
    res.type("html").send(page);
  });

  return router;
}

function requireMerchant(req: Request, res: Response): boolean {
  if (sessionOf(req).merchant) return true;
  res.redirect(303, "/merchant/sign-in");
  return false;
}

/** The service's view of the order: its amounts are the truth. Undefined when it cannot be read now. */
async function readServiceOrder(shop: ShopContext, orderId: string): Promise<Order | undefined> {
  try {
    return await shop.client.orders.get(orderId, { signal: AbortSignal.timeout(5_000) });
  } catch {
    return undefined; // the page says the amounts are unavailable
  }
}

function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
