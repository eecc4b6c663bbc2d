import type { PurchaseAuthClient } from "@purchase-auth/core";
import express, { type Request, type RequestHandler, type Router } from "express";
import { Authorizer } from "./charges/authorizer.js";
import { Charges } from "./charges/charges.js";
import { MerchantWrites } from "./charges/merchant-writes.js";
import { ChargeNotifier } from "./charges/notifier.js";
import { type ServerChargeInput, type ServerChargeResult, serverCharge } from "./charges/server-charge.js";
import { jsonWriteEntry, rateLimitGuard } from "./http/guards.js";
import { jsonBodyReader } from "./http/json-body.js";
import { type PurchaseAuthOptions, resolveOptions } from "./options.js";
import { problem, purchaseAuthErrorHandler } from "./problems.js";
import { alerter } from "./reconcile/alerts.js";
import { type ReconcileReport, Reconciler } from "./reconcile/reconciler.js";
import "./request-context.js";
import { chargeRoute } from "./routes/charge.js";
import type { RouteContext } from "./routes/context.js";
import { eventsRoute } from "./routes/events.js";
import { merchantRoute } from "./routes/merchant.js";
import { statusRoute } from "./routes/status.js";
import { StreamQuota } from "./routes/stream-quota.js";
import { webhookRoute } from "./routes/webhook.js";
import type { ChargeStore } from "./stores/types.js";

/** The router `purchaseAuth` returns: mount it under a path of your app, e.g. `/payments`. */
export interface PurchaseAuthRouter extends Router {
  /** The client the router charges with. */
  readonly client: PurchaseAuthClient;
  /** The router's charge store. */
  readonly store: ChargeStore;
  /**
   * Capture, cancel and refund on their own (`POST /charges/:authorizationId/capture | cancel |
   * refund`), to mount behind your back office's authentication:
   * `app.use("/admin/payments", requireStaff, router.merchant)`. With `merchantRoutes: "separate"`
   * these routes are served only here.
   */
  readonly merchant: Router;
  /**
   * Charges a known customer's stored token for an order the server built (a re-order, a renewal,
   * an invoice), with no browser involved: the same store, keys (reference + customer token +
   * attempt), webhooks and reconciliation as `POST /charges`. Calling it again for the same
   * reference answers the existing charge (`started: false`) or resends its attempt's key; after a
   * definite failure it is a new attempt. Throws a TypeError naming a wrong field before anything is
   * sent, and the service's errors as core's (`error.outcome`, `error.retry`).
   */
  charge(input: ServerChargeInput): Promise<ServerChargeResult>;
  /**
   * One reconciliation pass now (the background reconciler runs them every `reconcileIntervalMs`):
   * for apps that run their jobs themselves, with `reconcileIntervalMs: 0`.
   */
  reconcile(): Promise<ReconcileReport>;
  /** Stops the reconciler, ends open live-update streams and closes the client if the router constructed it. */
  close(): Promise<void>;
}

/**
 * Unknown paths under a router's own mount path are ours to answer; mounted at "/", every other path
 * is the app's.
 */
const notFoundUnderMount: RequestHandler = (req, _res, next) => {
  if (req.baseUrl === "") next();
  else next(problem("not-found", 404, "Not found", "There is nothing at this address."));
};

/**
 * The payment routes of a shop, as an Express router:
 *
 * ```ts
 * app.use("/payments", purchaseAuth({ clientOptions, resolveCustomer, buildOrder, webhookSecret }));
 * ```
 *
 * Options are checked here, once: a wrong one throws a `ConfigurationError` naming it.
 */
export function purchaseAuth(options: PurchaseAuthOptions): PurchaseAuthRouter {
  const resolved = resolveOptions(options);
  const { client, store, logger } = resolved;
  const notifier = new ChargeNotifier(logger);
  const alert = alerter(logger, resolved.onAlert);
  const charges = new Charges({
    store,
    notifier,
    logger,
    onEvent: resolved.onEvent,
    alert,
    now: resolved.now,
  });
  const authorizer = new Authorizer({ options: resolved, charges, alert });
  const merchantWrites = new MerchantWrites({ options: resolved, charges, alert });
  const ctx: RouteContext = {
    options: resolved,
    charges,
    authorizer,
    writes: merchantWrites,
    notifier,
    alert,
    streams: new Set(),
    streamQuota: new StreamQuota(resolved.liveUpdates),
  };
  const reconciler = new Reconciler(resolved, charges, authorizer, merchantWrites);

  const setContext = (req: Request) => {
    req.purchaseAuth = { client, store };
  };
  const context: RequestHandler = (req, _res, next) => {
    setContext(req);
    next();
  };
  // Per route, not router.use(): mounted at "/", the router must not parse or limit the app's requests.
  // Without a rateLimit hook there is no guard: one middleware less on every request.
  const json = express.json({ limit: resolved.maxBodyBytes });
  const limits: RequestHandler[] = resolved.rateLimit ? [rateLimitGuard(resolved.rateLimit)] : [];
  const reads: RequestHandler[] = [context, json, ...limits];
  // State-changing routes take JSON only, empty bodies included (CSRF): checked before the body is
  // read and before any of the app's hooks runs.
  const writes: RequestHandler[] = [
    jsonWriteEntry(setContext, jsonBodyReader(resolved.maxBodyBytes, json)),
    ...limits,
  ];

  const errors = purchaseAuthErrorHandler({
    logger,
    answerUnknownErrors: false,
    ...(resolved.onError === undefined ? {} : { onError: resolved.onError }),
  });

  const merchant = express.Router();
  for (const operation of ["capture", "cancel", "refund"] as const) {
    merchant.post(`/charges/:authorizationId/${operation}`, ...writes, merchantRoute(ctx, operation));
  }
  merchant.use(notFoundUnderMount, errors);

  const router = express.Router();
  router.post("/webhooks", context, ...webhookRoute(ctx));
  router.post("/charges", ...writes, chargeRoute(ctx));
  router.get("/charges/:authorizationId", ...reads, statusRoute(ctx));
  router.get("/charges/:authorizationId/events", ...reads, eventsRoute(ctx));
  if (resolved.merchantRoutes === "included") router.use(merchant);
  router.use(notFoundUnderMount, errors);
  reconciler.start();

  let closing: Promise<void> | undefined;
  return Object.assign(router, {
    client,
    store,
    merchant,
    charge: (input: ServerChargeInput) => serverCharge({ options: resolved, charges, authorizer }, input),
    reconcile: () => reconciler.reconcile(),
    close(): Promise<void> {
      reconciler.stop();
      for (const closeStream of [...ctx.streams]) closeStream();
      // Once: closing the client's dispatcher twice throws.
      closing ??= resolved.ownsClient ? client.close() : Promise.resolve();
      return closing;
    },
  });
}
