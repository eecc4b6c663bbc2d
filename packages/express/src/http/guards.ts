import type { Request, RequestHandler } from "express";
import type { ResolvedCustomer, ResolvedOptions } from "../options.js";
import { type HttpProblem, problem } from "../problems.js";
import { asyncHandler } from "./async-handler.js";

/**
 * Every state-changing route (POST /charges, capture, cancel, refund) takes JSON only, and says so
 * with `Content-Type: application/json` even when its body is empty. A cross-site HTML form can
 * only send application/x-www-form-urlencoded, multipart/form-data or text/plain, and `fetch` from
 * another origin cannot set application/json without a CORS preflight: so a request another site
 * makes a signed-in visitor's browser send (CSRF) is refused with 415 before any hook runs, even
 * when the app authenticates with a cookie. (Not /webhooks: those are verified by their signature.)
 *
 * The entry middleware of those routes: sets the request context, refuses anything but JSON, then
 * reads the body with `parseJson`.
 */
export function jsonWriteEntry(
  setContext: (req: Request) => void,
  parseJson: RequestHandler,
): RequestHandler {
  // One middleware instead of three (context, this check, the body parser): each costs a hop
  // through Express's router on every charge.
  return (req, res, next) => {
    setContext(req);
    if (isJsonMediaType(req.headers["content-type"])) {
      parseJson(req, res, next);
      return;
    }
    next(
      problem(
        "unsupported-media-type",
        415,
        "Unsupported media type",
        "This request must be sent with Content-Type: application/json, even when it has no body.",
      ),
    );
  };
}

/** `application/json`, with or without parameters (`; charset=utf-8`), in any letter case. */
function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semicolon = header.indexOf(";");
  const essence = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  return essence === "application/json";
}

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

/**
 * The signed-in customer, from the app's `resolveCustomer`; 401 when there is none. Answers
 * without a promise when the hook does (no microtask hop per charge).
 */
export function requireCustomer(
  req: Request,
  options: ResolvedOptions,
): ResolvedCustomer | Promise<ResolvedCustomer> {
  const found = options.resolveCustomer(req);
  if (isThenable(found)) return Promise.resolve(found).then((customer) => signedIn(req, customer));
  return signedIn(req, found);
}

function signedIn(req: Request, customer: ResolvedCustomer | null | undefined): ResolvedCustomer {
  if (customer === null || customer === undefined) {
    throw problem("unauthenticated", 401, "Sign-in required", "Please sign in to pay.");
  }
  if (typeof customer.customerId !== "string" || typeof customer.customerToken !== "string") {
    throw new TypeError("resolveCustomer must return { customerId: string, customerToken: string } or null");
  }
  if (req.purchaseAuth) req.purchaseAuth.customer = customer;
  return customer;
}

/** True for a promise or any other thenable an app's hook may return. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
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
