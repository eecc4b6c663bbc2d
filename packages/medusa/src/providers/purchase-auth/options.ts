import { ConfigurationError, isGuid, PurchaseAuthClient } from "@purchase-auth/core";

/**
 * When the service makes its attempts: "synchronous" asks for one attempt during checkout
 * (preferSynchronous; the answer is 200 unless the customer must pass a challenge), "asap" for one
 * asynchronous attempt at once, `{ relative: [...] }` for attempts at the given `dd.HH:mm:ss` delays.
 * Asynchronous outcomes arrive by webhook.
 */
export type AttemptSchedulePolicy = "synchronous" | "asap" | { relative: string[] };

/** The options of the provider, given in medusa-config.ts. */
/**
 * Default age limit of a webhook's timestamp: 7 days. Medusa checks webhooks later, from a subscriber
 * (a delay, then retries), so a short limit would drop genuine events processed late. Replays are
 * harmless: the signature still proves the event is the service's, and states only move forward.
 */
export const WEBHOOK_TOLERANCE_SECONDS = 7 * 86_400;

/**
 * Default grace of an accepted (202) authorization without news: a day after its last scheduled
 * attempt. The service redelivers webhooks for a while, then gives up; past this the reconcile job
 * flags the session for review (see workflows/outcome-overdue.ts).
 */
export const OUTCOME_GRACE_MS = 86_400_000;

export interface PurchaseAuthProviderOptions {
  /** The service's base URL (test and production differ). */
  baseUrl: string;
  /** The token endpoint's host, when it differs from `baseUrl`. */
  authUrl?: string;
  /** OAuth 2.0 client id of the merchant's API key. */
  clientId: string;
  /** OAuth 2.0 client secret. Never logged, never put into payment data. */
  clientSecret: string;
  /** The environment's scope, `<SCOPE_ID>/.default`. */
  scope: string;
  /** Store id sent with every authorization; omitted, the service uses the token's store. */
  storeId?: string;
  /**
   * "Manual" (default): Medusa's capture (admin, or your workflow) captures at the service, also
   * partially. "Auto": the service captures right after authorizing; Medusa records the capture.
   */
  captureMode?: "Manual" | "Auto";
  /** Default "synchronous". */
  attemptSchedule?: AttemptSchedulePolicy;
  /** Secret(s) the service signs webhooks with; several during a rotation. */
  webhookSecret: string | string[];
  /** Oldest webhook timestamp accepted, in seconds. Default 7 days (see WEBHOOK_TOLERANCE_SECONDS). */
  webhookToleranceSeconds?: number;
  /**
   * VAT percent (0 to 100, at most 2 decimals) of the single order line sent when the cart's lines
   * are not known or do not add up to the amount. Default 0.
   */
  defaultVatPercent?: number | string;
  /** "cart" (default): the cart's lines with their VAT when known server-side; "single": always one line. */
  orderLines?: "cart" | "single";
  /** A GUID namespacing the idempotency keys derived from Medusa ids. Default: the plugin's own. */
  idempotencyNamespace?: string;
  /** Time limit of one HTTP attempt, in ms (core's default 30,000). */
  timeoutMs?: number;
  /** Retries of an unknown outcome with the same idempotency key (core's default 3). */
  maxRetries?: number;
  /**
   * How long, in ms, a payment session the service accepted (202) may go without news of its
   * outcome after its last scheduled attempt before the reconcile job flags it for review
   * (OUTCOME_OVERDUE). Default 86,400,000 (a day); 3,600,000 (an hour) to 2,592,000,000 (30 days).
   */
  outcomeGraceMs?: number;
}

/** Options after validation, defaults filled in. */
export interface ResolvedProviderOptions {
  client: {
    baseUrl: string;
    authUrl?: string;
    clientId: string;
    clientSecret: string;
    scope: string;
    timeoutMs?: number;
    maxRetries?: number;
  };
  storeId: string | undefined;
  captureMode: "Manual" | "Auto";
  attemptSchedule: AttemptSchedulePolicy;
  webhookSecrets: string[];
  webhookToleranceSeconds: number;
  defaultVatPercent: string;
  orderLines: "cart" | "single";
  idempotencyNamespace: string;
  outcomeGraceMs: number;
}

/** The plugin's idempotency namespace: keys are GUIDs derived from it and Medusa's ids. */
export const DEFAULT_IDEMPOTENCY_NAMESPACE = "8d5b7a2e-3c4f-4e1a-9b6d-2f0c7e9a1d43";

const TIMESPAN = /^\d{2}\.\d{2}:\d{2}:\d{2}$/;

/** Thrown for a bad option; the message names the option and says what to change. */
export class InvalidOptionError extends Error {
  readonly option: string;
  constructor(option: string, problem: string) {
    super(`Invalid option ${option} of the purchase-auth payment provider: ${problem}`);
    this.name = "InvalidOptionError";
    this.option = option;
  }
}

function text(options: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = options[name];
  if (value === undefined || value === null || value === "") {
    if (required) throw new InvalidOptionError(name, "is required");
    return undefined;
  }
  if (typeof value !== "string" || value.trim() === "")
    throw new InvalidOptionError(name, "must be a string");
  return value;
}

function vatPercent(value: unknown): string {
  if (value === undefined || value === null) return "0";
  const textValue = typeof value === "number" ? String(value) : value;
  if (typeof textValue !== "string" || !/^\d{1,3}(\.\d{1,2})?$/.test(textValue) || Number(textValue) > 100) {
    throw new InvalidOptionError(
      "defaultVatPercent",
      "must be a number from 0 to 100 with at most 2 decimals",
    );
  }
  return textValue;
}

function schedule(value: unknown): AttemptSchedulePolicy {
  if (value === undefined || value === null) return "synchronous";
  if (value === "synchronous" || value === "asap") return value;
  const relative = (value as { relative?: unknown }).relative;
  if (
    typeof value === "object" &&
    Array.isArray(relative) &&
    relative.length > 0 &&
    relative.every((entry) => typeof entry === "string" && TIMESPAN.test(entry))
  ) {
    return { relative: [...(relative as string[])] };
  }
  throw new InvalidOptionError(
    "attemptSchedule",
    'must be "synchronous", "asap" or { relative: ["dd.HH:mm:ss", ...] } with at least one entry',
  );
}

function secrets(value: unknown): string[] {
  const list = typeof value === "string" ? [value] : value;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.some((entry) => typeof entry !== "string" || !entry)
  ) {
    throw new InvalidOptionError(
      "webhookSecret",
      "is required: the secret (or a list of secrets during rotation) the service signs webhooks with",
    );
  }
  return [...list] as string[];
}

function positiveInteger(
  options: Record<string, unknown>,
  name: string,
  max: number,
  min = 0,
): number | undefined {
  const value = options[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(name, `must be a whole number from ${min} to ${max}`);
  }
  return value;
}

/**
 * Validates the options once, when Medusa loads the provider. The connection options are checked
 * by core's own rules (the same the client applies), so the messages match core's.
 */
export function resolveProviderOptions(input: unknown): ResolvedProviderOptions {
  if (typeof input !== "object" || input === null) {
    throw new InvalidOptionError("options", "the provider needs an options object");
  }
  const options = input as Record<string, unknown>;
  const captureMode = options.captureMode ?? "Manual";
  if (captureMode !== "Manual" && captureMode !== "Auto") {
    throw new InvalidOptionError("captureMode", 'must be "Manual" or "Auto"');
  }
  const orderLines = options.orderLines ?? "cart";
  if (orderLines !== "cart" && orderLines !== "single") {
    throw new InvalidOptionError("orderLines", 'must be "cart" or "single"');
  }
  const namespace = text(options, "idempotencyNamespace", false) ?? DEFAULT_IDEMPOTENCY_NAMESPACE;
  if (!isGuid(namespace)) throw new InvalidOptionError("idempotencyNamespace", "must be a GUID");
  const timeoutMs = positiveInteger(options, "timeoutMs", 600_000);
  const maxRetries = positiveInteger(options, "maxRetries", 10);
  const authUrl = text(options, "authUrl", false);
  const client = {
    baseUrl: text(options, "baseUrl", true)!,
    ...(authUrl === undefined ? {} : { authUrl }),
    clientId: text(options, "clientId", true)!,
    clientSecret: text(options, "clientSecret", true)!,
    scope: text(options, "scope", true)!,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(maxRetries === undefined ? {} : { maxRetries }),
  };
  checkWithCoreRules(client);
  return {
    client,
    storeId: text(options, "storeId", false),
    captureMode,
    attemptSchedule: schedule(options.attemptSchedule),
    webhookSecrets: secrets(options.webhookSecret),
    webhookToleranceSeconds:
      positiveInteger(options, "webhookToleranceSeconds", 30 * 86_400) ?? WEBHOOK_TOLERANCE_SECONDS,
    defaultVatPercent: vatPercent(options.defaultVatPercent),
    orderLines,
    idempotencyNamespace: namespace,
    // At least an hour: shorter would call deliveries lost while the service still redelivers them.
    outcomeGraceMs:
      positiveInteger(options, "outcomeGraceMs", 30 * 86_400_000, 3_600_000) ?? OUTCOME_GRACE_MS,
  };
}

function checkWithCoreRules(client: ResolvedProviderOptions["client"]): void {
  try {
    void new PurchaseAuthClient(client).close();
  } catch (error) {
    if (ConfigurationError.isInstance(error)) {
      throw new InvalidOptionError(error.option, error.message.replace(/^Invalid option \S+: /, ""));
    }
    throw error;
  }
}
