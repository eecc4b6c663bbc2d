import type { Dispatcher } from "undici";
import { z } from "zod";
import { ConfigurationError } from "../errors/errors.js";
import { formatPath } from "../validation/issues.js";
import {
  DEFAULT_EVENT_TYPES,
  DEFAULT_HEADERS,
  DEFAULT_PATHS,
  type ServiceEventTypes,
  type ServiceHeaders,
  type ServicePaths,
} from "./wire-names.js";

/** Where the client reports what it does. `console` fits; so do pino, winston and Medusa's logger. */
export interface Logger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  info?(message: string, fields?: Record<string, unknown>): void;
  warn?(message: string, fields?: Record<string, unknown>): void;
  error?(message: string, fields?: Record<string, unknown>): void;
}

export interface PurchaseAuthClientOptions {
  /** The service's base URL, e.g. `https://api.example.com` (test and production differ). */
  baseUrl: string;
  /** The token endpoint's host, when it differs from `baseUrl`. The token path is appended. */
  authUrl?: string;
  /** OAuth 2.0 client id of your API key. */
  clientId: string;
  /** OAuth 2.0 client secret. Never logged, serialised or shown by `util.inspect`. */
  clientSecret: string;
  /** The environment's scope, `<SCOPE_ID>/.default`. */
  scope: string;
  /** Time limit of one HTTP attempt, in ms. Default 30,000. */
  timeoutMs?: number;
  /** Time limit of a whole call including retries and backoff, in ms. Default 90,000. */
  deadlineMs?: number;
  /**
   * Retries of an attempt whose outcome is unknown (network failure, timeout, 503, key in
   * progress); always with the same idempotency key. Default 3. 0 disables them, except the one
   * immediate retry of a reset on a reused keep-alive socket.
   */
  maxRetries?: number;
  /** First backoff delay in ms; doubles per retry, with full jitter. Default 250. */
  retryBaseDelayMs?: number;
  /** Longest backoff delay in ms of the client's own (a server's `Retry-After` is not capped). Default 5,000. */
  retryMaxDelayMs?: number;
  /** Refresh the access token this long before it expires, in ms. Default 120,000. */
  tokenRefreshMarginMs?: number;
  /** Receives debug, info and warn lines; never secrets. */
  logger?: Logger;
  /** An undici dispatcher (Agent, Pool, ProxyAgent, MockAgent). Default: one keep-alive Agent per client. */
  dispatcher?: Dispatcher;
  /** Overrides of the supplement's paths, for a deployment that differs. */
  paths?: Partial<ServicePaths>;
  /** Overrides of the supplement's header names. */
  headers?: Partial<ServiceHeaders>;
  /** Overrides of the supplement's event type names. */
  eventTypes?: Partial<ServiceEventTypes>;
  /** The clock token expiry and the idempotency window are measured with, in epoch ms. For tests that move time. */
  now?: () => number;
  /**
   * How long after its first send a key may be sent again, in ms: the service answers a key for one
   * hour (specification section 8) and forgets it after 24. Default 3,600,000.
   */
  idempotencyWindowMs?: number;
  /** Subtracted from the window for clock skew between us and the service, in ms. Default 300,000. */
  idempotencySafetyMarginMs?: number;
}

/** Options after validation, with every default filled in. */
export interface ResolvedOptions {
  baseUrl: string;
  authUrl: string;
  clientId: string;
  scope: string;
  timeoutMs: number;
  deadlineMs: number;
  maxRetries: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  tokenRefreshMarginMs: number;
  logger: Logger;
  dispatcher: Dispatcher | undefined;
  paths: ServicePaths;
  headers: ServiceHeaders;
  eventTypes: ServiceEventTypes;
  now: () => number;
  idempotencyWindowMs: number;
  idempotencySafetyMarginMs: number;
}

const httpUrl = z
  .string()
  .url()
  .refine((value) => /^https?:\/\//i.test(value), "must start with http:// or https://")
  .transform((value) => value.replace(/\/+$/, ""));

const millis = (max: number) => z.number().int().positive().max(max);

const nonEmpty = (label: string) => z.string().trim().min(1, `${label} must not be empty`);

const overrides = (defaults: Record<string, string>) =>
  z
    .object(Object.fromEntries(Object.keys(defaults).map((key) => [key, z.string().min(1).optional()])))
    .strict();

const optionsSchema = z.object({
  baseUrl: httpUrl,
  authUrl: httpUrl.optional(),
  clientId: nonEmpty("clientId"),
  clientSecret: z.string().min(1, "clientSecret must not be empty"),
  scope: nonEmpty("scope").refine(
    (value) => value.endsWith("/.default"),
    "must have the form <SCOPE_ID>/.default",
  ),
  timeoutMs: millis(600_000).default(30_000),
  deadlineMs: millis(3_600_000).default(90_000),
  idempotencyWindowMs: millis(3_600_000).default(3_600_000),
  idempotencySafetyMarginMs: z.number().int().min(0).max(3_600_000).default(300_000),
  maxRetries: z.number().int().min(0).max(10).default(3),
  retryBaseDelayMs: z.number().int().min(0).max(60_000).default(250),
  retryMaxDelayMs: z.number().int().min(0).max(300_000).default(5_000),
  tokenRefreshMarginMs: z.number().int().min(0).max(3_600_000).default(120_000),
  logger: z
    .custom<Logger>((value) => typeof value === "object" && value !== null, "must be an object")
    .optional(),
  dispatcher: z
    .custom<Dispatcher>(
      (value) =>
        typeof value === "object" && value !== null && typeof (value as Dispatcher).dispatch === "function",
      "must be an undici Dispatcher",
    )
    .optional(),
  paths: overrides(DEFAULT_PATHS).optional(),
  headers: overrides(DEFAULT_HEADERS).optional(),
  eventTypes: overrides(DEFAULT_EVENT_TYPES).optional(),
  now: z.custom<() => number>((value) => typeof value === "function", "must be a function").optional(),
});

/** Validates client options once, at construction; the error names the option to change. */
export function resolveOptions(options: PurchaseAuthClientOptions): ResolvedOptions {
  if (typeof options !== "object" || options === null) {
    throw new ConfigurationError("options", "PurchaseAuthClient needs an options object");
  }
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const option = formatPath(issue.path);
    const detail = issue.code === "invalid_type" && issue.input === undefined ? "is required" : issue.message;
    throw new ConfigurationError(option, `Invalid option ${option}: ${detail}`);
  }
  const value = parsed.data;
  if (value.timeoutMs > value.deadlineMs) {
    throw new ConfigurationError("timeoutMs", "Invalid option timeoutMs: must not exceed deadlineMs");
  }
  return {
    baseUrl: value.baseUrl,
    authUrl: value.authUrl ?? value.baseUrl,
    clientId: value.clientId,
    scope: value.scope,
    timeoutMs: value.timeoutMs,
    deadlineMs: value.deadlineMs,
    idempotencyWindowMs: value.idempotencyWindowMs,
    idempotencySafetyMarginMs: value.idempotencySafetyMarginMs,
    maxRetries: value.maxRetries,
    retryBaseDelayMs: value.retryBaseDelayMs,
    retryMaxDelayMs: value.retryMaxDelayMs,
    tokenRefreshMarginMs: value.tokenRefreshMarginMs,
    logger: value.logger ?? {},
    dispatcher: value.dispatcher,
    paths: { ...DEFAULT_PATHS, ...definedOnly(value.paths) },
    headers: { ...DEFAULT_HEADERS, ...definedOnly(value.headers) },
    eventTypes: { ...DEFAULT_EVENT_TYPES, ...definedOnly(value.eventTypes) },
    now: value.now ?? Date.now,
  };
}

function definedOnly(record: Record<string, string | undefined> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record ?? {}).filter(([, value]) => value !== undefined),
  ) as Record<string, string>;
}
