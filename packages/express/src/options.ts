import {
  type CaptureMode,
  ConfigurationError,
  DEFAULT_IDEMPOTENCY_NAMESPACE,
  formatPath,
  guidSchema,
  type ItemInput,
  type Logger,
  PurchaseAuthClient,
  type PurchaseAuthClientOptions,
  timespanSchema,
} from "@purchase-auth/core";
import type { Request } from "express";
import { z } from "zod";
import type { WebhookEventListener } from "./charges/charges.js";
import type { AlertHandler } from "./reconcile/alerts.js";
import { MemoryChargeStore } from "./stores/memory.js";
import type { ChargeStore } from "./stores/types.js";

/** When the service attempts the charge. */
export type Timing =
  /** One synchronous attempt (`preferSynchronous`): the answer carries the outcome, unless a challenge is needed. */
  | "now"
  /** One asynchronous attempt as soon as possible (no schedule); the outcome arrives by webhook. */
  | "asap"
  /** Attempts on a relative schedule from `schedules`; the outcome arrives by webhook. */
  | "scheduled";

/** Whose payment method is charged, decided by the app's own authentication (never the browser). */
export interface ResolvedCustomer {
  /** The app's id of the customer; only this customer may read the charge. */
  customerId: string;
  /** The customer token stored at the customer's first checkout (a GUID). */
  customerToken: string;
}

/** What the browser may say about a charge, after validation against the options. */
export interface ChargeInput {
  cartId: string;
  captureMode: CaptureMode;
  timing: Timing;
  /** The name of the entry of `schedules`, when `timing` is "scheduled". */
  schedule?: string;
}

/** The order to charge, built on the server from the app's cart and price list. */
export interface BuiltOrder {
  /** The app's order reference (at most 50 characters): one reference, one charge. */
  reference: string;
  /** ISO 4217 code; must match the customer token's currency. */
  currency: string;
  /** Lines with prices from the server, never from the request body. */
  items: ItemInput[];
  actionReference?: string;
  settlementReference?: string;
  /** Omitted: the store id held in the customer token. */
  storeId?: string;
}

export interface LiveUpdateOptions {
  /** How often an open stream re-reads the store, to see changes made by other instances. Default 2,000 ms. */
  pollIntervalMs?: number;
  /** A comment line this often keeps proxies from closing an idle stream. Default 15,000 ms. */
  heartbeatMs?: number;
  /** A stream is closed after this long; the browser's EventSource reconnects. Default 300,000 ms. */
  maxDurationMs?: number;
  /** Open streams one customer may hold in this process (tabs, reconnects); beyond: 429. Default 5. */
  maxStreamsPerCustomer?: number;
  /** Open streams in this process, all customers together; beyond: 429. Default 1,000. */
  maxStreams?: number;
}

export interface PurchaseAuthOptions {
  /** The client to use. Give this or `clientOptions`. */
  client?: PurchaseAuthClient;
  /** Options to construct a client with (closed by the router's `close()`). Give this or `client`. */
  clientOptions?: PurchaseAuthClientOptions;
  /** Finds the signed-in customer and their customer token; null answers 401. */
  resolveCustomer: (req: Request) => ResolvedCustomer | null | Promise<ResolvedCustomer | null>;
  /** Builds the order from the app's cart, with server-side prices. Throw `HttpProblem` to refuse. */
  buildOrder: (req: Request, input: ChargeInput) => BuiltOrder | Promise<BuiltOrder>;
  /**
   * Where charges and webhook event ids are kept. Default: a new `MemoryChargeStore` with the
   * router's `logger` (one instance only, bounded to 100,000 charges and 100,000 event ids).
   */
  store?: ChargeStore;
  /** The webhook signing secret; several during rotation (any one valid signature is enough). */
  webhookSecret: string | ReadonlyArray<string>;
  /** Oldest webhook timestamp accepted, in seconds. Default 300. */
  webhookToleranceSeconds?: number;
  /** Who may capture, cancel and refund. Default: nobody (every merchant route answers 403). */
  authorizeMerchant?: (req: Request) => boolean | Promise<boolean>;
  /**
   * `"included"` (default): capture, cancel and refund are served by the router itself, next to the
   * shopper's routes. `"separate"`: only by `router.merchant`, which you mount on a path of its own
   * behind your back office's authentication (`authorizeMerchant` still applies).
   */
  merchantRoutes?: "included" | "separate";
  /** Capture mode of a charge whose request names none. Default "Auto". */
  captureMode?: CaptureMode;
  /** Capture modes the browser may choose (the default is always allowed). Default: none. */
  allowedCaptureModes?: ReadonlyArray<CaptureMode>;
  /** Timing of a charge whose request names none. Default "now". */
  timing?: Timing;
  /** Timings the browser may choose (the default is always allowed). Default: none. */
  allowedTimings?: ReadonlyArray<Timing>;
  /** Named relative schedules (`dd.HH:mm:ss` delays) the "scheduled" timing picks from. */
  schedules?: Readonly<Record<string, ReadonlyArray<string>>>;
  /** The entry of `schedules` used when a "scheduled" request names none. */
  schedule?: string;
  /** Largest request body accepted on any route, in bytes; larger answers 413. Default 65,536. */
  maxBodyBytes?: number;
  /** Return false to refuse a request with 429 (webhooks are not limited). Default: allow all. */
  rateLimit?: (req: Request) => boolean | Promise<boolean>;
  /** Longest a route waits for the service, retries included, in ms. Default 20,000. */
  timeoutMs?: number;
  /** A GUID of your own for the idempotency keys, if two apps share order references. */
  idempotencyNamespace?: string;
  /** Server-sent events of `GET /charges/:id/events`. */
  liveUpdates?: LiveUpdateOptions;
  /** Called once a webhook event is stored and applied (at least once per event id). */
  onEvent?: WebhookEventListener;
  /** Receives warnings and errors (never secrets). Default: `console`. */
  logger?: Logger;
  /**
   * Called when money may be held or taken that the shop's records do not explain: a charge given
   * up to review (`needs_review`), or an authorization the service reports for a charge that knows
   * another. Alerts are also logged at error level. Page someone.
   */
  onAlert?: AlertHandler;
  /**
   * Called with every error the router answers with a 5xx and every error it passes on with
   * `next(err)` (errors it does not know, e.g. a bug in a hook), with its request: for Sentry.
   */
  onError?: (error: unknown, req: Request) => void;
  /**
   * How often the background reconciler runs, in ms: it re-sends create calls whose outcome is
   * unknown (same key, inside the idempotency window), applies webhook events a crash left parked,
   * and gives up to review what can no longer be learnt. It also runs once at start-up. 0 turns it
   * off (call `router.reconcile()` from your own job runner). Default 60,000.
   */
  reconcileIntervalMs?: number;
  /**
   * How long after its first send an attempt's key may still be sent, in ms. The service answers a
   * key for one hour and forgets it after 24: past this, a resend could charge twice, so the
   * charge is given up to review instead. Merchant writes (capture, cancel, refund) keep the same
   * window. Default 3,300,000 (55 minutes: the hour less a margin for clock skew); at most
   * 3,600,000, and at least twice `timeoutMs` (a lost write is sent again only once its last send
   * has ended, `timeoutMs` after it began, and only inside the window).
   */
  resendWindowMs?: number;
  /**
   * How long a charge the service accepted (202) may go without news of its outcome after its last
   * scheduled attempt, in ms, before the reconciler gives it up to review and raises an alert: the
   * service redelivers webhooks for hours, then gives up, and there is no call to ask it about an
   * authorization. A webhook that still arrives moves the charge on. Default 86,400,000 (a day);
   * at least 3,600,000 (shorter would call deliveries lost while the service still redelivers).
   */
  outcomeGraceMs?: number;
  /**
   * The clock the window is measured with, in epoch ms. Default `Date.now` (tests move it). Keep it
   * the client's clock: a merchant write resent inside the window tells core its age on this one.
   */
  now?: () => number;
}

/** Options after validation, defaults filled in. */
export interface ResolvedOptions {
  client: PurchaseAuthClient;
  ownsClient: boolean;
  resolveCustomer: PurchaseAuthOptions["resolveCustomer"];
  buildOrder: PurchaseAuthOptions["buildOrder"];
  store: ChargeStore;
  webhookSecrets: string[];
  webhookToleranceSeconds: number;
  authorizeMerchant: NonNullable<PurchaseAuthOptions["authorizeMerchant"]>;
  merchantRoutes: "included" | "separate";
  captureMode: CaptureMode;
  allowedCaptureModes: CaptureMode[];
  timing: Timing;
  allowedTimings: Timing[];
  schedules: Record<string, string[]>;
  schedule: string | undefined;
  maxBodyBytes: number;
  /** Undefined when the app gave none: then no guard runs at all. */
  rateLimit: PurchaseAuthOptions["rateLimit"];
  timeoutMs: number;
  idempotencyNamespace: string;
  liveUpdates: Required<LiveUpdateOptions>;
  onEvent: WebhookEventListener | undefined;
  logger: Logger;
  onAlert: AlertHandler | undefined;
  onError: PurchaseAuthOptions["onError"];
  reconcileIntervalMs: number;
  resendWindowMs: number;
  outcomeGraceMs: number;
  now: () => number;
}

const TIMINGS = ["now", "asap", "scheduled"] as const;
const CAPTURE_MODES = ["Auto", "Manual"] as const;

const fn = (shape: string) =>
  z.custom<(...args: never[]) => unknown>(
    (value) => typeof value === "function",
    `must be a function ${shape}`,
  );

const object = (what: string) =>
  z.custom<object>((value) => typeof value === "object" && value !== null, `must be ${what}`);

const millis = (min: number, max: number) => z.number().int().min(min).max(max);

const secret = z.string().min(1, "must not be empty");

const optionsSchema = z.strictObject({
  client: z
    .custom<PurchaseAuthClient>(
      (value) => value instanceof PurchaseAuthClient || isClientLike(value),
      "must be a PurchaseAuthClient",
    )
    .optional(),
  clientOptions: object(
    "the options of a PurchaseAuthClient ({ baseUrl, clientId, clientSecret, scope })",
  ).optional(),
  resolveCustomer: fn("(req) => { customerId, customerToken } | null that finds the signed-in customer"),
  buildOrder: fn("(req, input) => { reference, currency, items } that builds the order from your cart"),
  store: z
    .custom<ChargeStore>(
      isStoreLike,
      "must implement ChargeStore (new MemoryChargeStore() or PostgresChargeStore)",
    )
    .optional(),
  webhookSecret: z.union([secret, z.array(secret).min(1, "must hold at least one secret")], {
    error: "must be the webhook signing secret (a string) or an array of secrets during rotation",
  }),
  webhookToleranceSeconds: z.number().int().min(1).max(3600).default(300),
  authorizeMerchant: fn("(req) => boolean that says who may capture, cancel and refund").optional(),
  merchantRoutes: z.enum(["included", "separate"]).default("included"),
  captureMode: z.enum(CAPTURE_MODES).default("Auto"),
  allowedCaptureModes: z.array(z.enum(CAPTURE_MODES)).default([]),
  timing: z.enum(TIMINGS).default("now"),
  allowedTimings: z.array(z.enum(TIMINGS)).default([]),
  schedules: z.record(z.string().min(1).max(50), z.array(timespanSchema).min(1)).default({}),
  schedule: z.string().optional(),
  maxBodyBytes: z
    .number()
    .int()
    .min(1024)
    .max(10 * 1024 * 1024)
    .default(64 * 1024),
  rateLimit: fn("(req) => boolean that returns false to refuse the request").optional(),
  timeoutMs: millis(100, 600_000).default(20_000),
  idempotencyNamespace: guidSchema.optional(),
  liveUpdates: z
    .strictObject({
      pollIntervalMs: millis(50, 600_000).default(2_000),
      heartbeatMs: millis(50, 600_000).default(15_000),
      maxDurationMs: millis(100, 24 * 3_600_000).default(300_000),
      maxStreamsPerCustomer: z.number().int().min(1).max(1_000).default(5),
      maxStreams: z.number().int().min(1).max(1_000_000).default(1_000),
    })
    .default({
      pollIntervalMs: 2_000,
      heartbeatMs: 15_000,
      maxDurationMs: 300_000,
      maxStreamsPerCustomer: 5,
      maxStreams: 1_000,
    }),
  onEvent: fn("(event, charge) => void called for each applied webhook event").optional(),
  logger: object("a logger ({ debug?, info?, warn?, error? }), e.g. console").optional(),
  onAlert: fn("(alert) => void called when a payment needs an operator").optional(),
  onError: fn("(error, req) => void called for every 5xx and every error passed to next(err)").optional(),
  reconcileIntervalMs: z
    .number()
    .int()
    .min(0)
    .max(24 * 3_600_000)
    .default(60_000),
  resendWindowMs: millis(1_000, 3_600_000).default(3_300_000),
  outcomeGraceMs: millis(3_600_000, 30 * 86_400_000).default(86_400_000),
  now: fn("() => number that returns the time in epoch milliseconds").optional(),
});

/** Validates the router's options once, at construction: a wrong one throws naming it. */
export function resolveOptions(options: PurchaseAuthOptions): ResolvedOptions {
  if (typeof options !== "object" || options === null) {
    throw new ConfigurationError("options", "purchaseAuth needs an options object");
  }
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) throw configurationError(parsed.error.issues[0]!, options);
  const value = parsed.data;

  if ((value.client === undefined) === (value.clientOptions === undefined)) {
    throw new ConfigurationError(
      "client",
      "Invalid option client: give either client (a PurchaseAuthClient) or clientOptions, exactly one",
    );
  }
  const scheduleNames = Object.keys(value.schedules);
  const usesSchedules = value.timing === "scheduled" || value.allowedTimings.includes("scheduled");
  if (usesSchedules && scheduleNames.length === 0) {
    throw new ConfigurationError(
      "schedules",
      'Invalid option schedules: the "scheduled" timing needs at least one named schedule, e.g. { hourly: ["00.01:00:00"] }',
    );
  }
  if (value.schedule !== undefined && !scheduleNames.includes(value.schedule)) {
    throw new ConfigurationError(
      "schedule",
      `Invalid option schedule: must name an entry of schedules (${scheduleNames.join(", ") || "none given"})`,
    );
  }
  if (value.timing === "scheduled" && value.schedule === undefined) {
    throw new ConfigurationError(
      "schedule",
      'Invalid option schedule: timing "scheduled" needs the name of the schedule used by default',
    );
  }

  if (value.resendWindowMs < 2 * value.timeoutMs) {
    // A write is sent again only once its last send has surely ended (timeoutMs after it began),
    // and only inside the window: a shorter window leaves the reconciler no time to send it.
    throw new ConfigurationError(
      "resendWindowMs",
      `Invalid option resendWindowMs: must be at least twice timeoutMs (${2 * value.timeoutMs}), so that a write whose answer was lost can be sent again after its send ended and before the window closes`,
    );
  }

  // Silence is the worst default for payments: 5xx and alerts go to the console unless told otherwise.
  const logger = (value.logger as Logger | undefined) ?? console;
  const { client, ownsClient } = clientFrom(
    value.client,
    value.clientOptions as PurchaseAuthClientOptions,
    logger,
  );
  return {
    client,
    ownsClient,
    resolveCustomer: options.resolveCustomer,
    buildOrder: options.buildOrder,
    store: value.store ?? new MemoryChargeStore({ logger }),
    webhookSecrets:
      typeof value.webhookSecret === "string" ? [value.webhookSecret] : [...value.webhookSecret],
    webhookToleranceSeconds: value.webhookToleranceSeconds,
    authorizeMerchant: options.authorizeMerchant ?? (() => false),
    merchantRoutes: value.merchantRoutes,
    captureMode: value.captureMode,
    allowedCaptureModes: unique([value.captureMode, ...value.allowedCaptureModes]),
    timing: value.timing,
    allowedTimings: unique([value.timing, ...value.allowedTimings]),
    schedules: value.schedules,
    schedule: value.schedule,
    maxBodyBytes: value.maxBodyBytes,
    rateLimit: options.rateLimit,
    timeoutMs: value.timeoutMs,
    idempotencyNamespace: value.idempotencyNamespace ?? DEFAULT_IDEMPOTENCY_NAMESPACE,
    liveUpdates: value.liveUpdates,
    onEvent: options.onEvent,
    logger,
    onAlert: options.onAlert,
    onError: options.onError,
    reconcileIntervalMs: value.reconcileIntervalMs,
    resendWindowMs: value.resendWindowMs,
    outcomeGraceMs: value.outcomeGraceMs,
    now: options.now ?? Date.now,
  };
}

function clientFrom(
  given: PurchaseAuthClient | undefined,
  clientOptions: PurchaseAuthClientOptions | undefined,
  logger: Logger,
): { client: PurchaseAuthClient; ownsClient: boolean } {
  if (given) return { client: given, ownsClient: false };
  try {
    return { client: new PurchaseAuthClient({ logger, ...clientOptions! }), ownsClient: true };
  } catch (error) {
    if (!ConfigurationError.isInstance(error)) throw error;
    // Name the option as the caller wrote it: clientOptions.scope, not scope.
    const option = `clientOptions.${error.option}`;
    throw new ConfigurationError(option, error.message.replace(`option ${error.option}`, `option ${option}`));
  }
}

function configurationError(issue: z.core.$ZodIssue, options: object): ConfigurationError {
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    const option = formatPath([...issue.path, key]);
    return new ConfigurationError(option, `Unknown option ${option}: remove it or check its spelling`);
  }
  const option = formatPath(issue.path);
  const missing = valueAt(options, issue.path) === undefined;
  const detail = !missing
    ? issue.message
    : issue.code === "invalid_type"
      ? "is required"
      : `is required: it ${issue.message}`;
  return new ConfigurationError(option, `Invalid option ${option}: ${detail}`);
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** A client from another copy of core in the install fails `instanceof`; its shape still fits. */
function isClientLike(value: unknown): boolean {
  const client = value as PurchaseAuthClient | null;
  return (
    typeof client === "object" &&
    client !== null &&
    typeof client.authorizations?.create === "function" &&
    typeof client.orders?.capture === "function" &&
    typeof client.verifyWebhook === "function"
  );
}

function isStoreLike(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const store = value as Record<string, unknown>;
  const methods: Array<keyof ChargeStore> = [
    "create",
    "findByReference",
    "findByAuthorizationId",
    "compareAndSet",
    "recordEvent",
    "markEventApplied",
    "unappliedEvents",
  ];
  return methods.every((method) => typeof store[method] === "function");
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}
