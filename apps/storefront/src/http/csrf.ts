import { timingSafeEqual } from "node:crypto";
import { HttpProblem } from "@purchase-auth/express";
import type { Request, RequestHandler } from "express";
import { PageError } from "./errors.js";
import { sessionOf } from "./sessions.js";

// Cross-site request forgery: another site must not be able to make a signed-in visitor's browser
// add to the cart, pay or capture. The session cookie is SameSite=Lax (not sent with cross-site
// POSTs), and on top of that every request that changes something carries the session's CSRF
// token: forms in a hidden `_csrf` field, fetch calls in an `X-CSRF-Token` header.

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function sentToken(req: Request): string | undefined {
  const header = req.get("x-csrf-token");
  if (header !== undefined) return header;
  const field = (req.body as Record<string, unknown> | undefined)?._csrf;
  return typeof field === "string" ? field : undefined;
}

export function hasValidCsrfToken(req: Request): boolean {
  const sent = sentToken(req);
  if (sent === undefined) return false;
  const expected = Buffer.from(sessionOf(req).csrfToken);
  const actual = Buffer.from(sent);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** For the shop's own forms (after the body is parsed): a 403 page when the token is missing. */
export function requireCsrfForPages(): RequestHandler {
  return (req, _res, next) => {
    if (SAFE_METHODS.has(req.method) || hasValidCsrfToken(req)) return next();
    next(
      new PageError(
        403,
        "Form expired",
        "This form has expired, or it was sent from another site. Please go back, reload the page and try again.",
      ),
    );
  };
}

/** For the payment routes, called with fetch: a 403 problem (JSON) when the header is missing. */
export function requireCsrfForPayments(): RequestHandler {
  return (req, _res, next) => {
    if (SAFE_METHODS.has(req.method) || hasValidCsrfToken(req)) return next();
    next(
      new HttpProblem({
        status: 403,
        title: "Forbidden",
        detail: "This page has expired. Please reload it and try again.",
      }),
    );
  };
}
