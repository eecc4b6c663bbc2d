import type { Request, RequestHandler } from "express";
import type { ResolvedCustomer, ResolvedOptions } from "../options.js";
import { type HttpProblem, problem } from "../problems.js";
import { asyncHandler } from "./async-handler.js";

/** Refuses with 429 when the app's `rateLimit` hook says so. */
export function rateLimitGuard(rateLimit: NonNullable<ResolvedOptions["rateLimit"]>): RequestHandler {
  return asyncHandler(async (req, _res, next) => {
    if (!(await rateLimit(req))) {
      throw problem(
        "too-many-requests",
        429,
        "Too many requests",
        "Too many requests. Please wait a moment.",
      );
    }
    next();
  });
}

/** The signed-in customer, from the app's `resolveCustomer`; 401 when there is none. */
export async function requireCustomer(req: Request, options: ResolvedOptions): Promise<ResolvedCustomer> {
  const customer = await options.resolveCustomer(req);
  if (customer === null || customer === undefined) {
    throw problem("unauthenticated", 401, "Sign-in required", "Please sign in to pay.");
  }
  if (typeof customer.customerId !== "string" || typeof customer.customerToken !== "string") {
    throw new TypeError("resolveCustomer must return { customerId: string, customerToken: string } or null");
  }
  if (req.purchaseAuth) req.purchaseAuth.customer = customer;
  return customer;
}

/** Merchant routes are denied unless the app's `authorizeMerchant` allows this request. */
export async function requireMerchant(req: Request, options: ResolvedOptions): Promise<void> {
  if (!(await options.authorizeMerchant(req))) {
    throw problem("forbidden", 403, "Forbidden", "You are not allowed to manage payments.");
  }
}

/** 404 for a charge that does not exist or is not this customer's: the two look the same. */
export function chargeNotFound(): HttpProblem {
  return problem("not-found", 404, "Charge not found", "This payment could not be found.");
}
